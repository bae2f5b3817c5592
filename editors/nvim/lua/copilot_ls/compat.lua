-- The Neovim version check, run before anything else of the plugin: on a Neovim older
-- than 0.11 (no vim.lsp.config, vim.uv, vim.health.start; Debian 12 ships 0.7.2) the
-- other modules fail with a Lua traceback. This file uses only what Neovim 0.5 has.
local M = {}

-- What the plugin needs: vim.lsp.config() and vim.lsp.enable().
M.needed = '0.11'

--- Whether this Neovim runs the plugin.
---@return boolean
function M.supported()
  return vim.fn.has('nvim-' .. M.needed) == 1
end

--- This Neovim's version, `0.7.2`.
---@return string
function M.running()
  local v = vim.version and vim.version()
  if type(v) ~= 'table' or v.major == nil then
    return '?'
  end
  return ('%d.%d.%d'):format(v.major, v.minor or 0, v.patch or 0)
end

-- What to do about it, for the message and :checkhealth's advice.
M.advice = {
  'Install Neovim ' .. M.needed .. ' or newer: https://github.com/neovim/neovim/releases (a tarball or an AppImage, no root needed)',
  'Meanwhile, `copilot-ls ask "your question"` in a terminal answers with the same server',
}

--- The one line that says what is wrong and what to do.
---@return string
function M.message()
  return ('copilot-ls needs Neovim %s or newer; this is %s. %s. %s.'):format(
    M.needed,
    M.running(),
    M.advice[1],
    M.advice[2]
  )
end

-- Whether the message was shown (a field, so that tests can start over).
M.said = false

--- Says it (once per session: plugin/ at startup and setup() from the user's config
--- both get here). Returns false, for `return compat.refuse()`.
---@return boolean
function M.refuse()
  if not M.said then
    M.said = true
    vim.notify(M.message(), vim.log.levels.ERROR)
  end
  return false
end

--- :checkhealth's reporting functions in this Neovim: vim.health.start/ok/... (0.10+),
--- vim.health.report_* (0.8, 0.9), or the `health` module's report_* (0.7).
---@return {start: fun(s: string), ok: fun(s: string), info: fun(s: string), warn: fun(s: string, advice?: string[]), error: fun(s: string, advice?: string[])}
function M.health()
  local h = vim.health
  if type(h) == 'table' and type(h.start) == 'function' then
    return h
  end
  if type(h) ~= 'table' or type(h.report_start) ~= 'function' then
    local ok, module = pcall(require, 'health')
    h = ok and type(module) == 'table' and module or {}
  end
  return {
    start = h.report_start,
    ok = h.report_ok,
    info = h.report_info,
    warn = h.report_warn,
    error = h.report_error,
  }
end

return M
