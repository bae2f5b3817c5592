-- The server's own checks of what an ask needs (PROTOCOL.md section 10, `copilot-ls
-- doctor`): from the running client (`workspace/executeCommand` `copilot.doctor`, over
-- the settings it was sent), else from `copilot-ls doctor --json` over setup()'s settings
-- passed as the environment variables the server reads (PROTOCOL.md section 2).
local M = {}

-- The server's endpoint probe alone may take 3 s; reading the index state adds a little.
M.timeout_ms = 10000

---@class copilot_ls.DoctorCheck
---@field name string
---@field status 'ok'|'warn'|'fail'
---@field detail string what was found and what to do, as the command line says it
---@field editor? string the same said for an editor (its settings, not variables)

--- The editor's form of a check's text, when the server gives one besides the command
--- line's (`editorDetail`, as VS Code's Check Setup reads it); servers up to 0.4.0 give
--- only `detail`.
---@param check table
---@return string?
local function editor_form(check)
  local text = check.editorDetail
  if type(text) == 'string' and vim.trim(text) ~= '' then
    return text
  end
  return nil
end

---@param value any the `{checks}` object the server answered
---@return copilot_ls.DoctorCheck[]? checks
---@return string? err
local function checks_of(value)
  if type(value) ~= 'table' or type(value.checks) ~= 'table' then
    return nil, 'the answer has no checks: ' .. vim.inspect(value):sub(1, 200)
  end
  local checks = {}
  for _, check in ipairs(value.checks) do
    if type(check) == 'table' then
      table.insert(checks, {
        name = tostring(check.name or '?'),
        status = tostring(check.status or '?'),
        detail = type(check.detail) == 'string' and check.detail or '',
        editor = editor_form(check),
      })
    end
  end
  return checks
end

--- Whether the client's server answers `copilot.doctor`.
---@param client vim.lsp.Client
---@return boolean
function M.offered_by(client)
  local commands = vim.tbl_get(client.server_capabilities or {}, 'executeCommandProvider', 'commands')
  return type(commands) == 'table' and vim.tbl_contains(commands, 'copilot.doctor')
end

--- The checks of a running server, over the settings the editor sent it.
---@param client vim.lsp.Client
---@param timeout_ms? integer
---@return copilot_ls.DoctorCheck[]? checks
---@return string? err
---@return boolean? older true when the server has no doctor (older than 0.4.0)
function M.from_client(client, timeout_ms)
  if not M.offered_by(client) then
    return nil, 'the running server does not offer copilot.doctor (older than 0.4.0)', true
  end
  local bufnr = next(client.attached_buffers or {})
  local response, err = client:request_sync(
    'workspace/executeCommand',
    { command = 'copilot.doctor', arguments = {} },
    timeout_ms or M.timeout_ms,
    bufnr
  )
  if not response then
    return nil, 'copilot.doctor: ' .. tostring(err or 'no answer')
  end
  if response.err then
    return nil, 'copilot.doctor: ' .. tostring(response.err.message or vim.inspect(response.err))
  end
  return checks_of(response.result)
end

local env_names = require('copilot_ls.config').env_names

--- The environment that makes `copilot-ls doctor` see setup()'s settings. apiKeyEnv has
--- no variable of its own: the key it names goes in the provider's default variable,
--- so the key checked and sent is the one the server would use (never on a command line).
---@param options copilot_ls.Options
---@return table<string, string> env
---@return string? note what was passed in another variable, for the report
function M.env(options)
  local env = {}
  for key, variable in pairs(env_names) do
    if options[key] ~= nil then
      env[variable] = tostring(options[key])
    end
  end
  if options.history == false then
    env.COPILOT_LS_HISTORY = 'off'
  end
  local note
  local provider = options.provider or vim.env.COPILOT_LS_PROVIDER
  local default_variable = ({ openai = 'OPENAI_API_KEY', anthropic = 'ANTHROPIC_API_KEY' })[provider]
  local variable = options.apiKeyEnv
  if default_variable and variable and variable ~= '' and variable ~= default_variable then
    env[default_variable] = vim.env[variable] or ''
    note = ('$%s is passed to it as $%s'):format(variable, default_variable)
  end
  return env, note
end

--- `<path> doctor --json --workspace <dir>` with setup()'s settings, with a timeout.
---@param path string
---@param options copilot_ls.Options
---@param workspace string
---@param timeout_ms? integer
---@return copilot_ls.DoctorCheck[]? checks
---@return string? err
---@return string|boolean|nil note with checks: what was passed in another variable;
---  without: true when the binary has no `doctor` subcommand (older than 0.4.0)
function M.from_cli(path, options, workspace, timeout_ms)
  local env, note = M.env(options)
  env.COPILOT_LS_LOG = 'error'
  local ok, result = pcall(function()
    return vim
      .system({ path, 'doctor', '--json', '--workspace', workspace }, { text = true, env = env })
      :wait(timeout_ms or M.timeout_ms)
  end)
  if not ok then
    return nil, tostring(result)
  end
  if result.signal == 9 or result.code == 124 then
    return nil, ('`copilot-ls doctor` did not finish within %d s'):format(
      math.floor((timeout_ms or M.timeout_ms) / 1000)
    )
  end
  -- Exit 1 means a check failed; the JSON is printed all the same.
  local decoded, value = pcall(vim.json.decode, result.stdout or '')
  if not decoded then
    local stderr = vim.trim(result.stderr or ''):match('[^\n]*')
    -- Exit 2 is bad usage: an unknown subcommand for a server before 0.4.0.
    local older = result.code == 2 and stderr:find('doctor', 1, true) ~= nil
    return nil,
      ('`copilot-ls doctor` failed (exit code %d)%s'):format(
        result.code,
        stderr ~= '' and (': ' .. stderr) or ''
      ),
      older
  end
  local checks, err = checks_of(value)
  return checks, err, note
end

return M
