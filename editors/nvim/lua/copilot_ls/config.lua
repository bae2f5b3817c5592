-- Options of the plugin: defaults, merging what setup() receives, and turning them into
-- the server's command line, initializationOptions and settings (PROTOCOL.md section 2).
local M = {}

--- Server settings and the environment variable the server reads each from (the
--- server's `Settings::from_env`): :checkhealth's sources and the doctor's environment.
M.env_names = {
  provider = 'COPILOT_LS_PROVIDER',
  baseUrl = 'COPILOT_LS_BASE_URL',
  model = 'COPILOT_LS_MODEL',
  maxSteps = 'COPILOT_LS_MAX_STEPS',
  stream = 'COPILOT_LS_STREAM',
  requestTimeoutSecs = 'COPILOT_LS_TIMEOUT_SECS',
  maxOutputTokens = 'COPILOT_LS_MAX_OUTPUT_TOKENS',
}

M.server_name = 'copilot_ls'
-- The section of `workspace/didChangeConfiguration` the server reads (it also reads the
-- older `copilot`): named after the product, never to be taken for GitHub Copilot's.
M.settings_section = 'copilot-ls'

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
  maxOutputTokens = 'number',
  history = 'boolean',
}

---@class copilot_ls.Options
M.defaults = {
  -- Command line of the server; nil means the first found of $COPILOT_LS_PATH, beside the
  -- plugin, the repository's build, PATH and ~/.cargo/bin (binary.lua).
  cmd = nil,
  -- Start the server through vim.lsp.enable() when setup() runs.
  enable = true,
  -- Files or directories marking the project root; the cwd when none is found.
  root_markers = { '.git' },
  -- The server's log filter ($COPILOT_LS_LOG). Neovim writes everything a server prints
  -- on stderr to lsp.log at ERROR level, so only warnings and errors by default; nil
  -- keeps $COPILOT_LS_LOG when it is set.
  log_level = nil,
  -- Server settings (PROTOCOL.md section 2); nil = the server's default.
  provider = nil,
  baseUrl = nil,
  model = nil,
  apiKeyEnv = nil,
  maxSteps = nil,
  stream = nil,
  requestTimeoutSecs = nil,
  maxOutputTokens = nil,
  -- false: the server reads no git history (no votes, no related changes, no git_log).
  history = nil,
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

-- What the last setup() refused (one line each), for :checkhealth.
---@type string[]
M.problems = {}

-- Why `provider = "editor"` cannot work here (PROTOCOL.md section 11): it answers with the
-- editor's own language models, through a model API that VS Code has and Neovim has not.
M.editor_provider = "the editor's own language models need an editor with a language model "
  .. 'API, such as VS Code, and Neovim has none. Use provider = "openai" or "anthropic" with '
  .. 'a key, "openai" with baseUrl for a local server (Ollama, llama.cpp), or "none"'

---@param value any
---@return boolean
local function is_integer(value)
  return type(value) == 'number' and value == math.floor(value) and value == value
end

---@param lo integer
---@param hi? integer
local function integer_in(lo, hi)
  return function(value)
    if not is_integer(value) or value < lo or (hi and value > hi) then
      return hi and ('an integer from %d to %d'):format(lo, hi)
        or ('an integer of at least %d'):format(lo)
    end
  end
end

---@param choices string[]
local function one_of(choices)
  return function(value)
    if not vim.tbl_contains(choices, value) then
      return 'one of "' .. table.concat(choices, '", "') .. '"'
    end
  end
end

local function fraction(value)
  if value <= 0 or value > 1 then
    return 'a fraction in (0, 1]'
  end
end

-- Every option: its type, and a check returning what a good value is when it is bad.
-- The ranges are the server's (README, Settings), so a value it would refuse is refused
-- here, before it is stored and resent with every later setup().
local schema = {
  cmd = {
    'table',
    function(value)
      if type(value[1]) ~= 'string' or value[1] == '' then
        return 'a list like { "/path/to/copilot-ls" }'
      end
    end,
  },
  enable = { 'boolean' },
  root_markers = {
    'table',
    function(value)
      for _, marker in ipairs(value) do
        if type(marker) ~= 'string' then
          return 'a list of file or directory names'
        end
      end
    end,
  },
  log_level = {
    'string',
    function(value)
      if vim.trim(value) == '' then
        return 'a log filter such as "warn" or "debug"'
      end
    end,
  },
  quickfix = { 'boolean' },
  provider = {
    'string',
    function(value)
      if value == 'editor' then
        return M.editor_provider, true
      end
      return one_of({ 'openai', 'anthropic', 'none' })(value)
    end,
  },
  baseUrl = {
    'string',
    function(value)
      -- '' is the server's way of going back to the provider's default.
      if value ~= '' and not value:match('^https?://[^%s]+$') then
        return 'an http:// or https:// URL'
      end
    end,
  },
  model = { 'string' },
  apiKeyEnv = {
    'string',
    function(value)
      if value ~= '' and not value:match('^[%a_][%w_]*$') then
        return 'the name of an environment variable (not the key itself)'
      end
    end,
  },
  maxSteps = { 'number', integer_in(1, 100) },
  stream = { 'boolean' },
  requestTimeoutSecs = { 'number', integer_in(1, 3600) },
  maxOutputTokens = { 'number', integer_in(1, 1000000) },
  history = { 'boolean' },
  answer = {
    'table',
    fields = {
      layout = { 'string', one_of({ 'float', 'split', 'vsplit' }) },
      width = { 'number', fraction },
      height = { 'number', fraction },
      border = { { 'string', 'table' } },
    },
  },
}

--- Edit distance counting a swap of two neighbours as one edit (optimal string
--- alignment), for "did you mean" hints: `modle` is one edit from `model`.
---@param a string
---@param b string
---@return integer
local function distance(a, b)
  local d = {}
  for i = 0, #a do
    d[i] = { [0] = i }
  end
  for j = 0, #b do
    d[0][j] = j
  end
  for i = 1, #a do
    for j = 1, #b do
      local cost = a:byte(i) == b:byte(j) and 0 or 1
      d[i][j] = math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
      if i > 1 and j > 1 and a:byte(i) == b:byte(j - 1) and a:byte(i - 1) == b:byte(j) then
        d[i][j] = math.min(d[i][j], d[i - 2][j - 2] + 1)
      end
    end
  end
  return d[#a][#b]
end

--- The known name closest to `name`: the same once case and `_`/`-` are ignored
--- (`max_steps` for `maxSteps`), else within a small edit distance (`modle`).
---@param name string
---@param known table<string, any>
---@return string?
function M.suggest(name, known)
  local function plain(s)
    return s:lower():gsub('[_%-]', '')
  end
  local best, best_distance = nil, math.huge
  for candidate in pairs(known) do
    local d = plain(candidate) == plain(name) and 0 or distance(name:lower(), candidate:lower())
    if d < best_distance or (d == best_distance and best and candidate < best) then
      best, best_distance = candidate, d
    end
  end
  if best and best_distance <= math.max(1, math.min(3, math.floor(#name / 3))) then
    return best
  end
  return nil
end

---@param prefix string
---@param key any
---@param known table
---@return string
local function unknown(prefix, key, known)
  local name = tostring(key)
  local message = ('unknown option %q'):format(prefix .. name)
  local hint = type(key) == 'string' and M.suggest(name, known)
  if hint then
    message = message .. (' (did you mean `%s`?)'):format(prefix .. hint)
  end
  return message
end

---@param spec table
---@param value any
---@return boolean
local function has_type(spec, value)
  local want = spec[1]
  if type(want) == 'table' then
    return vim.tbl_contains(want, type(value))
  end
  return type(value) == want
end

---@param spec table
---@return string
local function type_name(spec)
  return type(spec[1]) == 'table' and table.concat(spec[1], ' or ') or spec[1]
end

---@param opts table
---@param fields table<string, table>
---@param prefix string
---@param problems string[]
---@return table valid
local function check_fields(opts, fields, prefix, problems)
  local valid = {}
  for key, value in pairs(opts) do
    local spec = fields[key]
    local name = prefix .. tostring(key)
    if not spec then
      table.insert(problems, unknown(prefix, key, fields))
    elseif not has_type(spec, value) then
      table.insert(
        problems,
        ('option %s must be a %s, got %s'):format(name, type_name(spec), type(value))
      )
    elseif spec.fields then
      local nested = check_fields(value, spec.fields, name .. '.', problems)
      if next(nested) then
        valid[key] = nested
      end
    else
      -- A check says what a good value is, or (`whole`) why this value cannot be.
      local want, whole
      if spec[2] then
        want, whole = spec[2](value)
      end
      if want and whole then
        table.insert(problems, ('option %s = %s: %s'):format(name, vim.inspect(value), want))
      elseif want then
        table.insert(problems, ('option %s must be %s, got %s'):format(name, want, vim.inspect(value)))
      else
        valid[key] = value
      end
    end
  end
  return valid
end

--- Checks the user's options. Returns the good ones and one line per bad one (unknown,
--- mistyped or out of range): a bad option changes nothing, the others still apply.
---@param opts table
---@return table valid
---@return string[] problems
function M.check(opts)
  local problems = {}
  local valid = check_fields(opts, schema, '', problems)
  table.sort(problems)
  return valid, problems
end

--- The first problem of opts, or nil (for scripts that only want a yes or no).
---@param opts table
---@return string? err
function M.validate(opts)
  local _, problems = M.check(opts)
  return problems[1]
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

--- The server's command line, in the order of binary.lua: setup({cmd}), $COPILOT_LS_PATH,
--- beside the plugin, the repository's build, PATH, ~/.cargo/bin. When none is found,
--- plain `copilot-ls`: starting it fails, and client.check_cmd() says what to do.
---@param options? copilot_ls.Options
---@return string[]
function M.cmd(options)
  local found = require('copilot_ls.binary').find(options or M.options)
  return found and found.cmd or { 'copilot-ls' }
end

--- Where the command came from, for messages and the health check.
---@param options? copilot_ls.Options
---@return string
function M.cmd_source(options)
  local found = require('copilot_ls.binary').find(options or M.options)
  return found and found.source or 'nowhere'
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

--- The server's environment on top of Neovim's: its log filter. Neovim logs all of a
--- server's stderr at ERROR level, so INFO lines would read as errors in lsp.log.
---@param options? copilot_ls.Options
---@return table
function M.cmd_env(options)
  options = options or M.options
  local level = options.log_level
  if not level then
    local from_env = vim.env.COPILOT_LS_LOG
    level = (from_env and from_env ~= '') and from_env or 'warn'
  end
  return { COPILOT_LS_LOG = level }
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
    cmd_env = M.cmd_env(options),
    init_options = M.server_settings(options),
    settings = { [M.settings_section] = M.server_settings(options) },
  }
end

return M
