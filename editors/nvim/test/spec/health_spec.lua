-- :checkhealth copilot_ls, read from the report buffer it opens.
local H = require('helpers')

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

  it('shows the binary and its version, the provider and that the key is set', function()
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
    assert.is_truthy(find(lines, 'provider: openai (from setup())'), report)
    assert.is_truthy(find(lines, 'http://127.0.0.1:9/v1'), report)
    local key = find(lines, '$' .. H.key_env .. ' is set')
    assert.is_truthy(key, report)
    assert.matches('OK', key)
    assert.is_nil(report:find(H.key, 1, true), 'the key itself must not show')
    assert.is_nil(report:find('ERROR', 1, true), report)
  end)

  it('probes the endpoint with the key, never showing it, and shows the settings in use', function()
    vim.env[H.key_env] = H.key
    local stub = H.http_stub(200, '{"data":[]}')
    require('copilot_ls').setup({
      enable = false,
      cmd = { H.server_bin },
      provider = 'openai',
      baseUrl = stub.url,
      apiKeyEnv = H.key_env,
      maxSteps = 5,
    })
    local lines = checkhealth()
    local report = table.concat(lines, '\n')
    local probe = find(lines, 'endpoint answered 200')
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
      cmd = { H.server_bin },
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

  it('warns when no provider is configured', function()
    require('copilot_ls').setup({ enable = false, cmd = { H.server_bin } })
    local line = find(checkhealth(), 'provider: none')
    assert.is_truthy(line)
    assert.matches('WARNING', line)
  end)

  it('gives no advice to set a key when provider none is chosen', function()
    require('copilot_ls').setup({ enable = false, cmd = { H.server_bin } })
    vim.env.COPILOT_LS_PROVIDER = 'none'
    local lines = checkhealth()
    local line = find(lines, 'provider: none')
    assert.is_truthy(line, table.concat(lines, '\n'))
    assert.matches('OK', line)
    assert.matches('$COPILOT_LS_PROVIDER', line, 1, true)
    for _, l in ipairs(lines) do
      assert.is_nil(l:find('API_KEY', 1, true), l)
      assert.is_nil(l:find('WARNING', 1, true), l)
    end
    vim.env.COPILOT_LS_PROVIDER = nil
    require('copilot_ls').setup({ provider = 'none' })
    line = find(checkhealth(), 'provider: none')
    assert.matches('OK', line)
    assert.matches('setup()', line, 1, true)
  end)

  it('reports an unset key variable for anthropic as an error', function()
    require('copilot_ls').setup({ enable = false, cmd = { H.server_bin }, provider = 'anthropic' })
    local lines = checkhealth()
    assert.is_truthy(find(lines, 'provider: anthropic (from setup())'))
    local line = find(lines, '$ANTHROPIC_API_KEY is not set')
    assert.is_truthy(line, table.concat(lines, '\n'))
    assert.matches('ERROR', line)
  end)

  it('follows $COPILOT_LS_PROVIDER and the default key variables', function()
    require('copilot_ls').setup({ enable = false, cmd = { H.server_bin } })
    vim.env.OPENAI_API_KEY = 'sk-x'
    assert.is_truthy(find(checkhealth(), 'provider: openai (from default ($OPENAI_API_KEY is set))'))
    vim.env.COPILOT_LS_PROVIDER = 'anthropic'
    vim.env.ANTHROPIC_API_KEY = 'sk-y'
    local lines = checkhealth()
    assert.is_truthy(find(lines, 'provider: anthropic (from $COPILOT_LS_PROVIDER)'))
    assert.is_truthy(find(lines, '$ANTHROPIC_API_KEY is set'))
  end)
end)
