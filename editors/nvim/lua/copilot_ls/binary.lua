-- Finding the server binary, and asking it for its version. The order, first found wins:
--   1. setup({ cmd = {...} })
--   2. $COPILOT_LS_PATH
--   3. beside the plugin: <plugin>/../copilot-ls, the unpacked release archive
--      (copilot-ls-VERSION-TARGET/ holds copilot-ls and nvim/)
--   4. the repository's build: <plugin>/../../target/release/copilot-ls, a checkout of
--      the repository (editors/nvim) where `cargo build --release` ran
--   5. copilot-ls on PATH
--   6. $CARGO_HOME/bin/copilot-ls (~/.cargo/bin by default: `cargo install`)
-- The first two are the user's explicit choice: when they name a file that does not run,
-- that is reported, never silently replaced by a binary found further down.
local M = {}

-- The plugin's directory (holding lua/, plugin/, lsp/, doc/), with symlinks resolved: a
-- package link such as pack/*/start/copilot_ls -> ~/src/copilot-ls/editors/nvim must
-- find the binary beside the real directory, not beside the link. A field, so that
-- tests can point it at a layout of their own.
local source = debug.getinfo(1, 'S').source:sub(2)
local here = vim.fn.fnamemodify(source, ':p:h:h:h')
M.plugin_dir = vim.uv.fs_realpath(here) or here

---@class copilot_ls.Binary
---@field cmd string[] the server's command line
---@field path string the executable's absolute path ('' when it does not run)
---@field source string where it was found, for messages and :checkhealth

---@param path string
---@return boolean
local function runs(path)
  return path ~= '' and vim.fn.executable(path) == 1
end

--- The places searched after the explicit ones, in order, as {source, path}; a PATH
--- entry has no fixed path.
---@return {source: string, path: string?}[]
function M.candidates()
  local parent = vim.fs.dirname(M.plugin_dir)
  local cargo_home = vim.env.CARGO_HOME
  if not cargo_home or cargo_home == '' then
    cargo_home = vim.fs.joinpath(vim.uv.os_homedir() or '~', '.cargo')
  end
  return {
    { source = 'beside the plugin (release archive)', path = vim.fs.joinpath(parent, 'copilot-ls') },
    {
      source = 'the repository build (target/release)',
      path = vim.fs.joinpath(vim.fs.dirname(parent), 'target', 'release', 'copilot-ls'),
    },
    { source = 'PATH', path = nil },
    { source = 'cargo install (' .. cargo_home .. '/bin)', path = vim.fs.joinpath(cargo_home, 'bin', 'copilot-ls') },
  }
end

--- The server binary for these options, or nil when none of the places holds one.
---@param options? copilot_ls.Options (default: the current options)
---@return copilot_ls.Binary? found
function M.find(options)
  options = options or require('copilot_ls.config').options
  if options.cmd then
    local cmd = vim.deepcopy(options.cmd)
    return { cmd = cmd, path = vim.fn.exepath(cmd[1]), source = 'setup({ cmd })' }
  end
  local from_env = vim.env.COPILOT_LS_PATH
  if from_env and from_env ~= '' then
    return { cmd = { from_env }, path = vim.fn.exepath(from_env), source = '$COPILOT_LS_PATH' }
  end
  for _, candidate in ipairs(M.candidates()) do
    local path = candidate.path or vim.fn.exepath('copilot-ls')
    if runs(path) then
      return { cmd = { path }, path = path, source = candidate.source }
    end
  end
  return nil
end

--- Where the lookup went, in order, for the message when nothing was found.
---@return string
function M.places()
  local places = { 'setup({ cmd })', '$COPILOT_LS_PATH' }
  for _, candidate in ipairs(M.candidates()) do
    table.insert(places, candidate.path or 'PATH')
  end
  return table.concat(places, ', ')
end

--- What is missing, without the fix: nil when `found` runs.
---@param found? copilot_ls.Binary
---@return string?
function M.missing(found)
  if found and found.path ~= '' then
    return nil
  end
  if found then
    return ('server binary %q not found (from %s)'):format(tostring(found.cmd[1]), found.source)
  end
  return 'no server binary found (looked in ' .. M.places() .. ')'
end

--- One line saying why there is no server to start, and what to do. nil when `found`
--- runs.
---@param found? copilot_ls.Binary
---@return string? err
function M.problem(found)
  local missing = M.missing(found)
  if not missing then
    return nil
  end
  local set = 'require("copilot_ls").setup({ cmd = { "/path/to/copilot-ls" } }) or $COPILOT_LS_PATH'
  if found then
    return 'copilot-ls: ' .. missing .. '; install copilot-ls or set ' .. set
  end
  return 'copilot-ls: '
    .. missing
    .. '; fix: unpack the release archive and use its nvim/ folder as the plugin, or run '
    .. '`cargo build --release` in the repository, or set '
    .. set
end

--- `<path> --version`, run with a short timeout: `copilot-ls 0.4.0 (0123456789)`.
---@param path string
---@param timeout_ms? integer
---@return {line: string, version: string?}? result nil with the reason on failure
---@return string? err
function M.version(path, timeout_ms)
  local ok, result = pcall(function()
    return vim.system({ path, '--version' }, { text = true }):wait(timeout_ms or 5000)
  end)
  if not ok then
    return nil, tostring(result)
  end
  if result.signal == 9 or result.code == 124 then
    return nil, 'timed out'
  end
  local line = vim.trim(result.stdout or ''):match('[^\n]*')
  if result.code ~= 0 or line == '' then
    return nil, result.code ~= 0 and ('exit code %d'):format(result.code) or 'no output'
  end
  return { line = line, version = line:match('^copilot%-ls%s+(%d+%.%d+%.%d+[%w.+-]*)') }
end

--- Compares two versions `X.Y.Z`: -1, 0 or 1 (numbers only; a suffix is ignored).
---@param a string
---@param b string
---@return integer
function M.compare(a, b)
  local function parts(v)
    local major, minor, patch = v:match('^(%d+)%.(%d+)%.(%d+)')
    return { tonumber(major) or 0, tonumber(minor) or 0, tonumber(patch) or 0 }
  end
  local pa, pb = parts(a), parts(b)
  for i = 1, 3 do
    if pa[i] ~= pb[i] then
      return pa[i] < pb[i] and -1 or 1
    end
  end
  return 0
end

return M
