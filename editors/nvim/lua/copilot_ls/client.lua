-- Finding the copilot_ls client for a buffer, starting it when needed, and waiting until
-- it has answered `initialize` (requests sent before that are refused by the server).
-- One client serves all the editor's roots (roots.lua): a buffer of another project
-- joins the running one.
local config = require('copilot_ls.config')
local roots = require('copilot_ls.roots')

local M = {}

--- A buffer the built-in client attaches to: a real file, not a scratch or help buffer.
---@param bufnr integer
---@return boolean
function M.is_file_buffer(bufnr)
  return vim.api.nvim_buf_is_valid(bufnr)
    and vim.bo[bufnr].buftype == ''
    and vim.api.nvim_buf_get_name(bufnr) ~= ''
end

--- Checks that the server's command can run; the error is one line with the fix.
---@param cmd string[]|function
---@return boolean ok
---@return string? err
function M.check_cmd(cmd)
  -- A function (an in-process RPC client) is the user's business.
  if type(cmd) ~= 'table' then
    return true
  end
  if cmd[1] and vim.fn.executable(cmd[1]) == 1 then
    return true
  end
  local binary = require('copilot_ls.binary')
  local found = binary.find(config.options)
  if found and found.cmd[1] ~= cmd[1] then
    -- Not the plugin's own lookup: the user's vim.lsp.config('copilot_ls', { cmd }).
    found = { cmd = cmd, path = '', source = "vim.lsp.config('copilot_ls')" }
  end
  return false, binary.problem(found)
end

--- The copilot_ls client for bufnr: the one attached to it, else the one running (a
--- buffer of another project adds its root to it as it attaches), else a new one. File
--- buffers get attached so the server sees their text.
---@param bufnr integer
---@return vim.lsp.Client? client
---@return string? err
function M.get(bufnr)
  local name = config.server_name
  local attached = vim.lsp.get_clients({ name = name, bufnr = bufnr })
  if attached[1] then
    return attached[1]
  end

  local root = config.root_dir(bufnr)
  local is_file = M.is_file_buffer(bufnr)
  for _, client in ipairs(vim.lsp.get_clients({ name = name })) do
    if roots.reuse(client, { name = name, root_dir = root }) then
      if is_file then
        vim.lsp.buf_attach_client(bufnr, client.id)
      end
      return client
    end
  end

  local resolved = vim.lsp.config[name]
  if not resolved then
    return nil,
      ('copilot-ls: no vim.lsp.config for %s (fix: put editors/nvim on the runtimepath)'):format(
        name
      )
  end
  local start_config = vim.deepcopy(resolved)
  if vim.deep_equal(start_config.cmd, { 'copilot-ls' }) then
    -- The plugin's fallback when setup() found no binary: one may exist now (the build
    -- step of a plugin manager may have finished since).
    start_config.cmd = config.cmd()
  end
  local ok, err = M.check_cmd(start_config.cmd)
  if not ok then
    return nil, err
  end
  start_config.name = name
  start_config.root_dir = root
  -- vim.lsp.start() takes the predicate from its options, not from the config.
  local id = vim.lsp.start(start_config, {
    bufnr = bufnr,
    attach = is_file,
    reuse_client = start_config.reuse_client or roots.reuse,
  })
  local client = id and vim.lsp.get_client_by_id(id)
  if not client then
    return nil, 'copilot-ls: the server did not start (fix: see :LspLog)'
  end
  return client
end

--- Calls fn(client) once the client is initialized, or fn(nil, err) if it stops or does
--- not finish initializing within timeout_ms. Polls on a timer rather than blocking: the
--- editor stays usable while a slow server starts.
---@param client vim.lsp.Client
---@param fn fun(client?: vim.lsp.Client, err?: string)
---@param timeout_ms? integer
function M.when_ready(client, fn, timeout_ms)
  if client.initialized then
    return fn(client)
  end
  local deadline = vim.uv.now() + (timeout_ms or 20000)
  local timer = assert(vim.uv.new_timer())
  timer:start(
    20,
    20,
    vim.schedule_wrap(function()
      if timer:is_closing() then
        return
      end
      local failure
      if client.initialized then
        failure = nil
      elseif client:is_stopped() then
        failure = 'copilot-ls: the server exited while starting (fix: see :LspLog)'
      elseif vim.uv.now() > deadline then
        failure = 'copilot-ls: the server did not finish starting (fix: see :LspLog)'
      else
        return
      end
      timer:stop()
      timer:close()
      if failure then
        fn(nil, failure)
      else
        fn(client)
      end
    end)
  )
end

return M
