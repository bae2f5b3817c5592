-- Options of the plugin: defaults, merging what setup() receives, and turning them into
-- the server's command line, initializationOptions and settings (PROTOCOL.md section 2).
local M = {}

M.server_name = 'copilot_ls'

-- The server's own settings, with the exact names of PROTOCOL.md section 2. They are
-- only sent when set: a key left out keeps the server's value (its default or the
-- environment), so the plugin never has to know the server's defaults.
M.server_keys = {
  provider = 'string',
  baseUrl = 'string',
  model = 'string',
  apiKeyEnv = 'string',
  maxSteps = 'number',
  stream = 'boolean',
  requestTimeoutSecs = 'number',
}

---@class copilot_ls.Options
M.defaults = {
  -- Command line of the server; nil means $COPILOT_LS_PATH, else `copilot-ls` on PATH.
  cmd = nil,
  -- Start the server through vim.lsp.enable() when setup() runs.
  enable = true,
  -- Files or directories marking the project root; the cwd when none is found.
  root_markers = { '.git' },
  -- Server settings (PROTOCOL.md section 2); nil = the server's default.
  provider = nil,
  baseUrl = nil,
  model = nil,
  apiKeyEnv = nil,
  maxSteps = nil,
  stream = nil,
  requestTimeoutSecs = nil,
  answer = {
    -- 'float', 'split' (below) or 'vsplit' (right)
    layout = 'float',
    -- float: fraction of the editor; split/vsplit: fraction of the current window
    width = 0.8,
    height = 0.8,
    border = 'rounded',
  },
  -- Put the citations of each answer in the quickfix list.
  quickfix = true,
}

---@type copilot_ls.Options
M.options = vim.deepcopy(M.defaults)

local option_types = {
  cmd = 'table',
  enable = 'boolean',
  root_markers = 'table',
  answer = 'table',
  quickfix = 'boolean',
}

--- Checks the user's options; returns a one-line error for the first bad one.
---@param opts table
---@return string? err
function M.validate(opts)
  for key, value in pairs(opts) do
    local want = option_types[key] or M.server_keys[key]
    if not want then
      return ('unknown option %q'):format(tostring(key))
    end
    if type(value) ~= want then
      return ('option %s must be a %s, got %s'):format(key, want, type(value))
    end
  end
  if opts.cmd and (type(opts.cmd[1]) ~= 'string' or opts.cmd[1] == '') then
    return 'option cmd must be a list like { "/path/to/copilot-ls" }'
  end
  if opts.answer and opts.answer.layout then
    local layout = opts.answer.layout
    if layout ~= 'float' and layout ~= 'split' and layout ~= 'vsplit' then
      return ('option answer.layout must be "float", "split" or "vsplit", got %q'):format(
        tostring(layout)
      )
    end
  end
  if opts.maxSteps and opts.maxSteps < 1 then
    return 'option maxSteps must be at least 1'
  end
  return nil
end

--- Merges opts over the current options (the defaults at first). A key left out keeps
--- its value, as it does in the server (PROTOCOL.md section 2), and as it must for
--- vim.lsp.config(), which can only merge too.
---@param opts? table
---@return copilot_ls.Options
function M.merge(opts)
  M.options = vim.tbl_deep_extend('force', M.options, opts or {})
  return M.options
end

--- The server's command line: setup({cmd}), else $COPILOT_LS_PATH, else PATH.
---@param options? copilot_ls.Options
---@return string[]
function M.cmd(options)
  options = options or M.options
  if options.cmd then
    return vim.deepcopy(options.cmd)
  end
  local from_env = vim.env.COPILOT_LS_PATH
  if from_env and from_env ~= '' then
    return { from_env }
  end
  return { 'copilot-ls' }
end

--- Where the command came from, for messages and the health check.
---@param options? copilot_ls.Options
---@return string
function M.cmd_source(options)
  options = options or M.options
  if options.cmd then
    return 'setup({ cmd })'
  end
  if vim.env.COPILOT_LS_PATH and vim.env.COPILOT_LS_PATH ~= '' then
    return '$COPILOT_LS_PATH'
  end
  return 'PATH'
end

--- The flat settings object of PROTOCOL.md section 2, only with the keys that are set.
--- An empty one is vim.empty_dict() so that it goes on the wire as {} and not [].
---@param options? copilot_ls.Options
---@return table
function M.server_settings(options)
  options = options or M.options
  local settings = vim.empty_dict()
  for key in pairs(M.server_keys) do
    if options[key] ~= nil then
      settings[key] = options[key]
    end
  end
  return settings
end

--- The project root of a buffer: the nearest root marker's directory, else the cwd.
---@param bufnr integer
---@param markers? string[]
---@return string
function M.root_dir(bufnr, markers)
  markers = markers or M.options.root_markers
  local root = vim.fs.root(bufnr, markers)
  return root or vim.fn.getcwd()
end

--- What setup() hands to vim.lsp.config(); lsp/copilot_ls.lua holds the rest.
---@param options? copilot_ls.Options
---@return vim.lsp.Config
function M.lsp_config(options)
  options = options or M.options
  return {
    cmd = M.cmd(options),
    init_options = M.server_settings(options),
    settings = { copilot = M.server_settings(options) },
  }
end

return M
