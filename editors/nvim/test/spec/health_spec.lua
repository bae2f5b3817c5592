-- :checkhealth copilot_ls, read from the report buffer it opens: the binary, where it was
-- found and its version against the plugin's, the settings the plugin sends, the server's
-- own checks (copilot-ls doctor), and the plugin's own endpoint probe for a server older
-- than those.
local H = require('helpers')
local L = require('layouts')

--- Runs the health check and returns its report lines.
---@return string[]
local function checkhealth()
  vim.cmd('silent checkhealth copilot_ls')
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  vim.cmd('silent! tabclose')
  return lines
end

---@param lines string[]
---@param pattern string plain text
---@return string? the first line containing it
local function find(lines, pattern)
  for _, line in ipairs(lines) do
    if line:find(pattern, 1, true) then
      return line
    end
  end
  return nil
end

--- The lines of one section of the report (from its `title ~` heading to the next).
---@param lines string[]
---@param title string plain text in the heading
---@return string[]
local function section(lines, title)
  local inside, result = false, {}
  for _, line in ipairs(lines) do
    if line:match(' ~$') then
      inside = line:find(title, 1, true) ~= nil
    elseif inside then
      table.insert(result, line)
    end
  end
  assert(#result > 0, ('no section %q in:\n%s'):format(title, table.concat(lines, '\n')))
  return result
end

local settings_section = 'settings the plugin sends'
local server_section = "the server's checks"
local label = { ok = 'OK', warn = 'WARNING', fail = 'ERROR' }

--- The real server's doctor checks by name, from `copilot-ls doctor --json` with `env`.
---@param ws string
---@param env table<string, string>
---@return table<string, {status: string, detail: string}>
local function doctor_checks(ws, env)
  local result = vim.system(
    { H.server_bin, 'doctor', '--json', '--workspace', ws },
    { text = true, env = vim.tbl_extend('force', { COPILOT_LS_LOG = 'error' }, env) }
  ):wait(15000)
  local ok, value = pcall(vim.json.decode, result.stdout or '')
  assert(ok and type(value.checks) == 'table', 'copilot-ls doctor --json: ' .. (result.stdout or '') .. (result.stderr or ''))
  local checks = {}
  for _, check in ipairs(value.checks) do
    checks[check.name] = check
  end
  return checks
end

--- A server binary older than `copilot-ls doctor` (0.3.0): the plugin probes the
--- endpoint itself.
---@return string path
local function old_server()
  return L.fake_server(L.tempdir('old') .. '/copilot-ls', 'copilot-ls 0.3.0 (unknown)')
end

describe(':checkhealth copilot_ls', function()
  local saved = {}
  before_each(function()
    H.load_plugin()
    for _, name in ipairs({ 'COPILOT_LS_PATH', 'COPILOT_LS_PROVIDER', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', H.key_env }) do
      saved[name] = vim.env[name]
      vim.env[name] = nil
    end
  end)
  after_each(function()
    for name, value in pairs(saved) do
      vim.env[name] = value
    end
    H.cleanup()
  end)

  it('shows the binary, where it was found and its version, the provider and that the key is set', function()
    local version = vim.trim(vim.system({ H.server_bin, '--version' }, { text = true }):wait().stdout or '')
    assert.are_not.equal('', version, 'copilot-ls --version printed nothing')
    vim.env[H.key_env] = H.key
    require('copilot_ls').setup({
      enable = false,
      cmd = { H.server_bin },
      provider = 'openai',
      baseUrl = 'http://127.0.0.1:9/v1',
      apiKeyEnv = H.key_env,
    })
    local lines = checkhealth()
    local report = table.concat(lines, '\n')
    local binary = find(lines, H.server_bin)
    assert.is_truthy(binary, report)
    assert.matches('OK', binary)
    assert.is_truthy(binary:find(version:match('[^\n]*'), 1, true), report)
    assert.matches('(from setup({ cmd }))', binary, 1, true)
    assert.is_truthy(find(lines, 'plugin ' .. require('copilot_ls').version .. ' at ' .. H.plugin_dir), report)
    local settings = section(lines, settings_section)
    assert.is_truthy(find(settings, 'provider: "openai" (from setup())'), report)
    assert.is_truthy(find(settings, 'baseUrl: "http://127.0.0.1:9/v1" (from setup())'), report)
    assert.is_truthy(find(settings, 'apiKeyEnv: "' .. H.key_env .. '" (from setup())'), report)
    -- Whether the key is set is the server's check: apiKeyEnv's key goes to the doctor
    -- as $OPENAI_API_KEY.
    local key = find(section(lines, server_section), 'apiKey: OPENAI_API_KEY is set')
    assert.is_truthy(key, report)
    assert.matches('OK', key)
    assert.is_nil(report:find(H.key, 1, true), 'the key itself must not show')
    -- The server's checks may fail (nothing answers at that baseUrl); the plugin's not.
    local ours = vim.list_extend(section(lines, 'copilot-ls ~'), section(lines, settings_section))
    assert.is_nil(table.concat(ours, '\n'):find('ERROR', 1, true), report)
  end)

  it('probes the endpoint itself for a server without doctor, with the key, never showing it', function()
    vim.env[H.key_env] = H.key
    local stub = H.http_stub(200, '{"data":[]}')
    require('copilot_ls').setup({
      enable = false,
      cmd = { old_server() },
      provider = 'openai',
      baseUrl = stub.url,
      apiKeyEnv = H.key_env,
      maxSteps = 5,
    })
    local lines = checkhealth()
    local report = table.concat(lines, '\n')
    local unavailable = find(section(lines, server_section), "the server's own checks are not available")
    assert.is_truthy(unavailable, report)
    assert.matches('WARNING', unavailable)
    assert.is_truthy(find(lines, 'Update copilot-ls to ' .. require('copilot_ls').version), report)
    local probe = find(section(lines, server_section), 'endpoint answered 200')
    assert.is_truthy(probe, report)
    assert.matches('OK', probe)
    assert.is_truthy(probe:find(stub.url .. '/models', 1, true), probe)
    assert.are.equal(1, #stub.heads)
    assert.matches('^GET /v1/models HTTP', stub.heads[1])
    assert.matches('Authorization: Bearer ' .. H.key, stub.heads[1], 1, true)
    assert.is_nil(report:find(H.key, 1, true), 'the key itself must not show')
    local settings = find(lines, 'settings the server uses')
    assert.is_truthy(settings, report)
    assert.matches('model = "gpt-4.1-mini" (default)', settings, 1, true)
    assert.matches('maxSteps = 5 (setup())', settings, 1, true)
    assert.matches('maxOutputTokens = 4096 (default)', settings, 1, true)
  end)

  it('reports a refused key, an unreachable endpoint, and probes anthropic at /v1/models', function()
    vim.env[H.key_env] = H.key
    local stub = H.http_stub(401, '{"error":"bad key ' .. H.key .. '"}')
    require('copilot_ls').setup({
      enable = false,
      cmd = { old_server() },
      provider = 'anthropic',
      baseUrl = stub.url:gsub('/v1$', ''),
      apiKeyEnv = H.key_env,
    })
    local lines = checkhealth()
    local line = find(lines, 'endpoint refused the key with 401')
    assert.is_truthy(line, table.concat(lines, '\n'))
    assert.matches('ERROR', line)
    assert.matches('^GET /v1/models HTTP', stub.heads[1])
    assert.matches('x-api-key: ' .. H.key, stub.heads[1], 1, true)
    assert.matches('anthropic-version: 2023-06-01', stub.heads[1], 1, true)
    assert.is_nil(table.concat(lines, '\n'):find(H.key, 1, true))

    require('copilot_ls').setup({ provider = 'openai', baseUrl = 'http://127.0.0.1:9/v1' })
    line = find(checkhealth(), 'endpoint unreachable')
    assert.is_truthy(line)
    assert.matches('127.0.0.1:9/v1/models', line, 1, true)
  end)

  it('finds the binary through $COPILOT_LS_PATH', function()
    vim.env.COPILOT_LS_PATH = H.server_bin
    require('copilot_ls').setup({ enable = false })
    local line = find(checkhealth(), H.server_bin)
    assert.is_truthy(line)
    assert.matches('from $COPILOT_LS_PATH', line, 1, true)
  end)

  it('reports a missing binary as an error with advice', function()
    require('copilot_ls').setup({ enable = false, cmd = { '/nonexistent/copilot-ls' } })
    local lines = checkhealth()
    local line = find(lines, '/nonexistent/copilot-ls')
    assert.is_truthy(line, table.concat(lines, '\n'))
    assert.matches('ERROR', line)
    assert.is_truthy(find(lines, 'COPILOT_LS_PATH'))
  end)

  it('warns when no provider is configured (the server says so)', function()
    require('copilot_ls').setup({ enable = false, cmd = { H.server_bin } })
    local lines = checkhealth()
    local line = find(section(lines, server_section), 'provider: none')
    assert.is_truthy(line, table.concat(lines, '\n'))
    assert.matches('WARNING', line)
    assert.is_truthy(find(section(lines, settings_section), 'none from setup()'), table.concat(lines, '\n'))
  end)

  it('gives no advice to set a key when provider none is chosen, and judges it as the server does', function()
    local ws = H.workspace()
    vim.cmd.cd(vim.fn.fnameescape(ws))
    local expected = doctor_checks(ws, { COPILOT_LS_PROVIDER = 'none' }).provider
    assert.is_truthy(expected)
    require('copilot_ls').setup({ enable = false, cmd = { H.server_bin } })
    vim.env.COPILOT_LS_PROVIDER = 'none'
    local lines = checkhealth()
    local report = table.concat(lines, '\n')
    assert.is_truthy(find(section(lines, settings_section), '$COPILOT_LS_PROVIDER = "none"'), report)
    -- The health check shows the doctor's editor form of its advice (issue #55 item 10).
    local line = find(section(lines, server_section), 'provider: ' .. (expected.editorDetail or expected.detail))
    assert.is_truthy(line, report)
    assert.matches(label[expected.status], line, 1, true)
    assert.is_nil(report:find('API_KEY', 1, true), report)
    vim.env.COPILOT_LS_PROVIDER = nil
    require('copilot_ls').setup({ provider = 'none' })
    lines = checkhealth()
    report = table.concat(lines, '\n')
    assert.is_truthy(find(section(lines, settings_section), 'provider: "none" (from setup())'), report)
    line = find(section(lines, server_section), 'provider: none')
    assert.matches(label[expected.status], line, 1, true)
    assert.is_nil(report:find('API_KEY', 1, true), report)
  end)

  it('reports an unset key variable for anthropic as an error (the server says so)', function()
    require('copilot_ls').setup({ enable = false, cmd = { H.server_bin }, provider = 'anthropic' })
    local lines = checkhealth()
    local checks = section(lines, server_section)
    assert.is_truthy(find(checks, 'provider: anthropic'), table.concat(lines, '\n'))
    local line = find(checks, 'ANTHROPIC_API_KEY is not set')
    assert.is_truthy(line, table.concat(lines, '\n'))
    assert.matches('ERROR', line)
  end)

  it('follows $COPILOT_LS_PROVIDER and the default key variables (the server says so)', function()
    require('copilot_ls').setup({ enable = false, cmd = { H.server_bin } })
    vim.env.OPENAI_API_KEY = 'sk-x'
    local lines = checkhealth()
    assert.is_truthy(find(section(lines, server_section), 'provider: openai (detected: OPENAI_API_KEY is set)'), table.concat(lines, '\n'))
    vim.env.COPILOT_LS_PROVIDER = 'anthropic'
    vim.env.ANTHROPIC_API_KEY = 'sk-y'
    lines = checkhealth()
    assert.is_truthy(find(section(lines, settings_section), '$COPILOT_LS_PROVIDER = "anthropic"'), table.concat(lines, '\n'))
    local checks = section(lines, server_section)
    assert.is_truthy(find(checks, 'provider: anthropic (COPILOT_LS_PROVIDER)'), table.concat(lines, '\n'))
    assert.is_truthy(find(checks, 'apiKey: ANTHROPIC_API_KEY is set'), table.concat(lines, '\n'))
    assert.is_nil(table.concat(lines, '\n'):find('sk-y', 1, true))
  end)

  --- The lines of the report that judge (OK, WARNING, ERROR), not those that inform.
  ---@param lines string[]
  ---@return string[]
  local function verdicts(lines)
    return vim.tbl_filter(function(line)
      return line:find('OK', 1, true) or line:find('WARNING', 1, true) or line:find('ERROR', 1, true)
    end, lines)
  end

  it("judges the key as the server does: a local server needs none (one source of truth)", function()
    -- An OpenAI-compatible server on this machine that lists the model, and no key set.
    local stub = H.http_stub(200, '{"object":"list","data":[{"id":"local-model","object":"model"}]}')
    local ws = H.workspace()
    vim.cmd.cd(vim.fn.fnameescape(ws))
    require('copilot_ls').setup({
      enable = false,
      cmd = { H.server_bin },
      provider = 'openai',
      baseUrl = stub.url,
      model = 'local-model',
    })
    local lines = checkhealth()
    local report = table.concat(lines, '\n')
    -- The plugin's settings are facts; every verdict on them is the server's.
    assert.are.same({}, verdicts(section(lines, settings_section)), report)
    local checks = section(lines, server_section)
    local key = find(checks, 'apiKey: OPENAI_API_KEY is not set')
    assert.is_truthy(key, report)
    assert.matches('OK', key, 1, true)
    for _, line in ipairs(verdicts(lines)) do
      if line:find('API_KEY', 1, true) then
        assert.are.equal(key, line, 'a second verdict on the key: ' .. line)
      end
    end
    local expected = doctor_checks(ws, {
      COPILOT_LS_PROVIDER = 'openai',
      COPILOT_LS_BASE_URL = stub.url,
      COPILOT_LS_MODEL = 'local-model',
    })
    -- The server's checks, each once, and nothing else judged in that section.
    assert.are.equal(vim.tbl_count(expected), #verdicts(checks), report)
    for name, check in pairs(expected) do
      local line = find(checks, name .. ': ')
      assert.is_truthy(line, name .. ' not in\n' .. report)
      assert.matches(label[check.status], line, 1, true)
    end
  end)

  it('judges the key as the running server does, its variable named and unset', function()
    local session = H.session(H.fake_provider({}), { apiKeyEnv = 'COPILOT_LS_UNSET_KEY' })
    vim.env.COPILOT_LS_UNSET_KEY = nil
    local lines = checkhealth()
    local report = table.concat(lines, '\n')
    assert.is_truthy(find(section(lines, server_section), 'from the running server (client ' .. session.client.id), report)
    assert.are.same({}, verdicts(section(lines, settings_section)), report)
    local key = find(section(lines, server_section), 'apiKey: COPILOT_LS_UNSET_KEY is not set')
    assert.is_truthy(key, report)
    assert.matches('OK', key, 1, true)
    assert.is_nil(report:find('WARNING API key', 1, true), report)
  end)

  it("shows the server's editor form of a check when it gives one, else its text", function()
    local doctor_json = vim.json.encode({
      checks = {
        {
          name = 'provider',
          status = 'warn',
          detail = 'none: set COPILOT_LS_PROVIDER with COPILOT_LS_BASE_URL',
          editorDetail = 'none: set provider and baseUrl in the settings',
        },
        {
          name = 'apiKey',
          status = 'fail',
          detail = 'OPENAI_API_KEY is not set: export it',
          editorDetail = 'OPENAI_API_KEY is not set: set apiKeyEnv',
        },
        { name = 'cache', status = 'ok', detail = '/tmp/cache is writable' },
      },
    })
    local fake = L.fake_server(L.tempdir('doctor-forms') .. '/copilot-ls', 'copilot-ls 0.4.0 (unknown)', doctor_json)
    require('copilot_ls').setup({ enable = false, cmd = { fake } })
    local lines = checkhealth()
    local report = table.concat(lines, '\n')
    local checks = section(lines, server_section)
    for text, status in pairs({
      ['provider: none: set provider and baseUrl in the settings'] = 'WARNING',
      ['apiKey: OPENAI_API_KEY is not set: set apiKeyEnv'] = 'ERROR',
      ['cache: /tmp/cache is writable'] = 'OK',
    }) do
      local line = find(checks, text)
      assert.is_truthy(line, text .. ' not in\n' .. report)
      assert.matches(status, line, 1, true)
    end
    assert.is_nil(report:find('COPILOT_LS_BASE_URL', 1, true), report)
    assert.is_nil(report:find('export it', 1, true), report)
  end)

  it('explains that provider "editor" needs an editor with a model API, which Neovim has not', function()
    H.capture_notify()
    local ok = require('copilot_ls').setup({ enable = false, cmd = { H.server_bin }, provider = 'editor' })
    assert.is_false(ok)
    assert.is_nil(require('copilot_ls.config').options.provider, 'refused, never sent')
    local errors = H.notified(vim.log.levels.ERROR)
    assert.are.equal(1, #errors, vim.inspect(H.notifications))
    assert.matches('provider = "editor"', errors[1].msg, 1, true)
    assert.matches('language model API, such as VS Code, and Neovim has none', errors[1].msg, 1, true)
    assert.matches('"openai"', errors[1].msg, 1, true)
    local lines = checkhealth()
    local report = table.concat(lines, '\n')
    local settings = section(lines, settings_section)
    local refused = find(settings, 'setup() refused provider = "editor"')
    assert.is_truthy(refused, report)
    assert.matches('ERROR', refused, 1, true)
    assert.is_truthy(find(settings, 'baseUrl = "http://127.0.0.1:11434/v1"'), report)

    -- Set where setup() does not look: the server's environment, vim.lsp.config().
    require('copilot_ls').setup({ enable = false, cmd = { H.server_bin } })
    vim.env.COPILOT_LS_PROVIDER = 'editor'
    vim.lsp.config('copilot_ls', { settings = { ['copilot-ls'] = { provider = 'editor' } } })
    lines = checkhealth()
    report = table.concat(lines, '\n')
    settings = section(lines, settings_section)
    for _, source in ipairs({ '$COPILOT_LS_PROVIDER', "vim.lsp.config('copilot_ls')" }) do
      local line = find(settings, 'provider "editor" (from ' .. source .. ')')
      assert.is_truthy(line, report)
      assert.matches('ERROR', line, 1, true)
      assert.matches('Neovim has none', line, 1, true)
    end
    assert.is_nil(find(settings, 'setup() refused'), 'the refusal is forgotten by the next setup(): ' .. report)
  end)
  it('warns when the versions of server and plugin differ, saying which to update', function()
    local plugin_version = require('copilot_ls').version
    local dir = L.tempdir('versions')
    local cases = {
      { '0.3.0', 'copilot-ls 0.3.0 is older than the plugin (' .. plugin_version .. '): update the server' },
      { '9.0.0', 'the plugin (' .. plugin_version .. ') is older than copilot-ls 9.0.0: update the plugin' },
    }
    for i, case in ipairs(cases) do
      local fake = L.fake_server(('%s/%d/copilot-ls'):format(dir, i), ('copilot-ls %s (0123456789)'):format(case[1]))
      require('copilot_ls').setup({ enable = false, cmd = { fake } })
      local lines = section(checkhealth(), 'copilot-ls ~')
      local line = find(lines, case[2])
      assert.is_truthy(line, table.concat(lines, '\n'))
      assert.matches('WARNING', line)
    end
    local same = L.fake_server(dir .. '/same/copilot-ls', ('copilot-ls %s (unknown)'):format(plugin_version))
    require('copilot_ls').setup({ enable = false, cmd = { same } })
    local lines = section(checkhealth(), 'copilot-ls ~')
    assert.is_nil(find(lines, 'older than'), table.concat(lines, '\n'))
    assert.is_nil(find(lines, 'WARNING'), table.concat(lines, '\n'))
  end)

  it("reports each of the server's doctor checks as OK, WARNING or ERROR, over setup()'s settings", function()
    vim.env[H.key_env] = H.key
    local doctor_json = vim.json.encode({
      checks = {
        { name = 'provider', status = 'ok', detail = 'openai (from COPILOT_LS_PROVIDER)' },
        { name = 'index', status = 'warn', detail = 'not built yet: run copilot-ls index' },
        { name = 'endpoint', status = 'fail', detail = 'http://127.0.0.1:9/v1 unreachable' },
      },
    })
    local fake = L.fake_server(L.tempdir('doctor') .. '/copilot-ls', 'copilot-ls 0.4.0 (unknown)', doctor_json)
    local ws = H.workspace()
    vim.cmd.cd(vim.fn.fnameescape(ws))
    require('copilot_ls').setup({
      enable = false,
      cmd = { fake },
      provider = 'openai',
      model = 'm1',
      apiKeyEnv = H.key_env,
      history = false,
    })
    local lines = checkhealth()
    local report = table.concat(lines, '\n')
    local checks = section(lines, server_section)
    assert.matches('OK', find(checks, 'provider: openai (from COPILOT_LS_PROVIDER)'))
    assert.matches('WARNING', find(checks, 'index: not built yet'))
    assert.matches('ERROR', find(checks, 'endpoint: http://127.0.0.1:9/v1 unreachable'))
    local origin = find(checks, 'copilot-ls doctor --workspace ' .. ws)
    assert.is_truthy(origin, report)
    assert.matches('$' .. H.key_env .. ' is passed to it as $OPENAI_API_KEY', origin, 1, true)
    -- The doctor's own check stands for the endpoint: the plugin does not probe it too.
    assert.is_nil(find(lines, 'endpoint unreachable'), report)
    assert.are.same({ 'doctor --json --workspace ' .. ws }, vim.fn.readfile(fake .. '.calls'))
    local env = vim.fn.readfile(fake .. '.env')
    for _, variable in ipairs({ 'COPILOT_LS_PROVIDER=openai', 'COPILOT_LS_MODEL=m1', 'COPILOT_LS_HISTORY=off', 'OPENAI_API_KEY=' .. H.key }) do
      assert.is_truthy(vim.tbl_contains(env, variable), variable .. ' not in ' .. vim.inspect(env))
    end
    assert.is_nil(report:find(H.key, 1, true), 'the key itself must not show')
  end)

  it('gives up on a doctor that does not answer in time, with a warning', function()
    local doctor = require('copilot_ls.doctor')
    local saved = doctor.timeout_ms
    finally(function()
      doctor.timeout_ms = saved
    end)
    doctor.timeout_ms = 300
    local fake = L.script(L.tempdir('hung') .. '/copilot-ls', [[
case "$1" in
  --version) echo "copilot-ls 0.4.0 (unknown)" ;;
  *) exec sleep 60 ;;
esac]])
    require('copilot_ls').setup({ enable = false, cmd = { fake }, provider = 'none' })
    local started = vim.uv.now()
    local lines = section(checkhealth(), server_section)
    local line = find(lines, 'did not finish within')
    assert.is_truthy(line, table.concat(lines, '\n'))
    assert.matches('WARNING', line)
    assert.is_truthy(find(lines, 'Run `copilot-ls doctor` in a shell'), table.concat(lines, '\n'))
    assert.is_true(vim.uv.now() - started < 5000)
  end)

  it("shows the real server's doctor checks, from the command line without a client", function()
    local ws = H.workspace()
    vim.cmd.cd(vim.fn.fnameescape(ws))
    require('copilot_ls').setup({ enable = false, cmd = { H.server_bin }, provider = 'none' })
    local expected = vim.system(
      { H.server_bin, 'doctor', '--json', '--workspace', ws },
      { text = true, env = { COPILOT_LS_PROVIDER = 'none' } }
    ):wait(15000)
    local ok, value = pcall(vim.json.decode, expected.stdout or '')
    assert(ok and type(value.checks) == 'table', 'copilot-ls doctor --json: ' .. (expected.stdout or '') .. (expected.stderr or ''))
    local lines = checkhealth()
    local report = table.concat(lines, '\n')
    local version = find(section(lines, 'copilot-ls ~'), H.server_bin)
    assert.matches('OK', version)
    assert.matches('copilot-ls ' .. require('copilot_ls').version, version, 1, true)
    local checks = section(lines, server_section)
    assert.is_truthy(find(checks, 'copilot-ls doctor --workspace ' .. ws), report)
    assert.is_true(#value.checks > 0)
    for _, check in ipairs(value.checks) do
      local line = find(checks, check.name .. ': ')
      assert.is_truthy(line, check.name .. ' not in\n' .. report)
      assert.matches(label[check.status], line, 1, true)
    end
  end)

  it('asks the running server for its checks, over the settings it was sent', function()
    local provider = H.fake_provider({})
    local session = H.session(provider, { model = 'model-from-setup' })
    assert.is_true(require('copilot_ls.doctor').offered_by(session.client), 'the server does not offer copilot.doctor')
    local lines = checkhealth()
    local report = table.concat(lines, '\n')
    local checks = section(lines, server_section)
    assert.is_truthy(find(checks, 'from the running server (client ' .. session.client.id), report)
    -- Only the running server knows this model: it came in initializationOptions.
    assert.is_truthy(find(checks, 'model-from-setup'), report)
    assert.is_truthy(find(section(lines, 'copilot-ls ~'), 'server copilot-ls ' .. require('copilot_ls').version), report)
  end)
end)
