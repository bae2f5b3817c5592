-- :checkhealth copilot_ls: this Neovim's version (first: an older one cannot load the
-- rest), the server binary (where it was found, its version against the plugin's), the
-- settings the plugin sends and where each comes from, and the server's own checks
-- (`copilot-ls doctor`), the one judge of the provider, the key and the endpoint. The
-- plugin judges those itself only for a server older than the doctor.
local compat = require('copilot_ls.compat')

-- Loaded by M.check() once the version is known to be enough (binary.lua needs vim.uv).
local binary, config, doctor

local M = {}

local health = compat.health()

-- The provider the server will use, following PROTOCOL.md section 2's order of sources
-- (setup() over the environment over the default).
---@return string provider
---@return string source
local function effective_provider(options)
  if options.provider then
    return options.provider, 'setup()'
  end
  local from_env = vim.env.COPILOT_LS_PROVIDER
  if from_env and from_env ~= '' then
    return from_env, '$COPILOT_LS_PROVIDER'
  end
  if (vim.env.ANTHROPIC_API_KEY or '') ~= '' then
    return 'anthropic', 'default ($ANTHROPIC_API_KEY is set)'
  end
  if (vim.env.OPENAI_API_KEY or '') ~= '' then
    return 'openai', 'default ($OPENAI_API_KEY is set)'
  end
  return 'none', 'default (no key variable set)'
end

--- The server binary the plugin starts, where it was found, and its version against the
--- plugin's. Returns the binary when it runs.
---@return copilot_ls.Binary?
local function check_binary(options)
  local found = binary.find(options)
  local missing = binary.missing(found)
  if missing then
    health.error(missing, {
      'Unpack the release archive (copilot-ls-VERSION-TARGET.tar.gz) and use its nvim/ folder as the plugin: it finds the copilot-ls beside it',
      'or run `cargo build --release` in the repository (the plugin finds target/release/copilot-ls)',
      'or set require("copilot_ls").setup({ cmd = { "/path/to/copilot-ls" } })',
      'or export COPILOT_LS_PATH=/path/to/copilot-ls',
    })
    return nil
  end
  ---@cast found -nil
  local result, err = binary.version(found.path)
  if not result then
    health.error(
      ('%s found (from %s) but `--version` failed: %s'):format(found.path, found.source, err),
      { 'Rebuild copilot-ls, or point setup({ cmd }) at a working binary' }
    )
    return nil
  end
  health.ok(('%s: %s (from %s)'):format(found.path, result.line, found.source))
  local plugin_version = require('copilot_ls').version
  if not result.version then
    health.warn(('could not read a version in %q; the plugin is %s'):format(result.line, plugin_version))
    return found
  end
  local order = binary.compare(result.version, plugin_version)
  if order < 0 then
    health.warn(
      ('copilot-ls %s is older than the plugin (%s): update the server'):format(result.version, plugin_version),
      {
        'Unpack the release archive of ' .. plugin_version .. ' (its copilot-ls and nvim/ go together)',
        'or run `cargo build --release` in the repository after updating it',
        'or point setup({ cmd }) or $COPILOT_LS_PATH at a newer binary',
      }
    )
  elseif order > 0 then
    health.warn(
      ('the plugin (%s) is older than copilot-ls %s: update the plugin'):format(plugin_version, result.version),
      {
        'Use the nvim/ folder of the release archive that holds this binary',
        'or update the plugin with your plugin manager (for example :Lazy update)',
      }
    )
  end
  return found
end

-- The server's own defaults (README, Settings). Shown so the user sees the value in use,
-- not "default"; the server stays the authority (a newer one may differ).
local server_defaults = {
  openai = { baseUrl = 'https://api.openai.com/v1', model = 'gpt-4.1-mini' },
  anthropic = { baseUrl = 'https://api.anthropic.com', model = 'claude-sonnet-4-5' },
  maxSteps = 8,
  stream = true,
  requestTimeoutSecs = 120,
  maxOutputTokens = 4096,
}

-- config.env_names, once config is loaded.
local env_names

--- The value the server uses for one setting, and where it comes from: setup() (or
--- vim.lsp.config) over the environment over the server's default (PROTOCOL.md section 2).
---@return any value
---@return string source
local function effective(options, key, provider)
  if options[key] ~= nil and options[key] ~= '' then
    return options[key], 'setup()'
  end
  local variable = env_names[key]
  if variable and (vim.env[variable] or '') ~= '' then
    return vim.env[variable], '$' .. variable
  end
  local default = server_defaults[key]
  if default == nil and server_defaults[provider] then
    default = server_defaults[provider][key]
  end
  return default, 'default'
end

---@return table settings key -> {value, source}
local function effective_settings(options, provider)
  local settings = {}
  for _, key in ipairs({ 'baseUrl', 'model', 'maxSteps', 'stream', 'requestTimeoutSecs', 'maxOutputTokens' }) do
    local value, source = effective(options, key, provider)
    settings[key] = { value = value, source = source }
  end
  return settings
end

local function check_provider(options)
  local provider, source = effective_provider(options)
  if provider == 'none' and source:find('^default') then
    health.warn('provider: none, from ' .. source .. '; answers only list relevant places', {
      'Set ANTHROPIC_API_KEY or OPENAI_API_KEY',
      'or setup({ provider = "openai", baseUrl = "http://127.0.0.1:11434/v1", model = "..." })',
    })
    return provider
  elseif provider == 'none' then
    -- Chosen on purpose: no key to set, nothing to probe.
    health.ok(
      'provider: none (from '
        .. source
        .. '): no model is called; answers list the places the server finds'
    )
    return provider
  end
  if provider == 'editor' then
    -- Said above, with what to use instead.
    return provider
  end
  if provider ~= 'openai' and provider ~= 'anthropic' then
    health.error(('provider %q (from %s) is not one of openai, anthropic, none'):format(
      provider,
      source
    ))
    return provider
  end
  local settings = effective_settings(options, provider)
  health.ok(
    ('provider: %s (from %s), baseUrl: %s, model: %s'):format(
      provider,
      source,
      tostring(settings.baseUrl.value),
      tostring(settings.model.value)
    )
  )
  local lines = {}
  for _, key in ipairs({ 'baseUrl', 'model', 'maxSteps', 'stream', 'requestTimeoutSecs', 'maxOutputTokens' }) do
    table.insert(
      lines,
      ('%s = %s (%s)'):format(key, vim.inspect(settings[key].value), settings[key].source)
    )
  end
  health.info('settings the server uses: ' .. table.concat(lines, ', '))
  return provider, settings
end

---@return string variable the name of the variable holding the key
local function key_variable(options, provider)
  return options.apiKeyEnv ~= nil and options.apiKeyEnv ~= '' and options.apiKeyEnv
    or (provider == 'anthropic' and 'ANTHROPIC_API_KEY' or 'OPENAI_API_KEY')
end

local function check_key(options, provider)
  if provider ~= 'openai' and provider ~= 'anthropic' then
    return
  end
  local variable = key_variable(options, provider)
  if (vim.env[variable] or '') ~= '' then
    -- Never show the key itself.
    health.ok(('API key variable $%s is set'):format(variable))
  elseif provider == 'openai' then
    -- Local OpenAI-compatible servers (Ollama, llama.cpp) need no key.
    health.warn(('API key variable $%s is not set'):format(variable), {
      'Fine for a local server; otherwise export ' .. variable,
    })
  else
    health.error(('API key variable $%s is not set'):format(variable), {
      'export ' .. variable .. '=... before starting Neovim, or setup({ apiKeyEnv = "..." })',
    })
  end
end

-- How long the probe may take: long enough for a slow network, short enough that
-- :checkhealth does not seem to hang.
M.probe_timeout_secs = 5

--- One cheap authenticated GET of the provider's model list: `{baseUrl}/models` for an
--- OpenAI-compatible server, `{baseUrl}/v1/models` for Anthropic. The key goes to curl
--- on stdin (`-H @-`), never on its command line, and is never shown.
---@return table? result {url, status, code, stderr, ms}, nil without curl
function M.probe(provider, base_url, key)
  if vim.fn.executable('curl') == 0 then
    return nil
  end
  base_url = tostring(base_url):gsub('/+$', '')
  local url, headers
  if provider == 'anthropic' then
    url = base_url .. '/v1/models'
    headers = { 'anthropic-version: 2023-06-01' }
    if key ~= '' then
      table.insert(headers, 'x-api-key: ' .. key)
    end
  else
    url = base_url .. '/models'
    headers = {}
    if key ~= '' then
      table.insert(headers, 'Authorization: Bearer ' .. key)
    end
  end
  local started = vim.uv.hrtime()
  local cmd = {
    'curl', '-sS', '-o', '/dev/null', '-w', '%{http_code}',
    '--max-time', tostring(M.probe_timeout_secs), '-H', '@-', url,
  }
  local ok, result = pcall(function()
    return vim
      .system(cmd, { text = true, stdin = table.concat(headers, '\n') .. '\n' })
      :wait((M.probe_timeout_secs + 2) * 1000)
  end)
  if not ok then
    return { url = url, status = 0, code = -1, stderr = tostring(result), ms = 0 }
  end
  local stderr = vim.trim(result.stderr or '')
  if key ~= '' then
    stderr = stderr:gsub(vim.pesc(key), '<redacted>')
  end
  return {
    url = url,
    status = tonumber(result.stdout) or 0,
    code = result.code,
    stderr = stderr,
    ms = math.floor((vim.uv.hrtime() - started) / 1e6),
  }
end

local function check_endpoint(options, provider, settings)
  if provider ~= 'openai' and provider ~= 'anthropic' then
    return
  end
  local key = vim.env[key_variable(options, provider)] or ''
  local result = M.probe(provider, settings.baseUrl.value, key)
  if not result then
    health.info('curl not found: the endpoint was not probed')
    return
  end
  local where = ('%s (%d ms)'):format(result.url, result.ms)
  if result.status >= 200 and result.status < 300 then
    health.ok('endpoint answered ' .. result.status .. ': ' .. where)
  elseif result.status == 401 or result.status == 403 then
    health.error(('endpoint refused the key with %d: %s'):format(result.status, where), {
      'Check the key in $' .. key_variable(options, provider),
    })
  elseif result.status > 0 then
    -- Some local servers have no model list; the chat endpoint may still work.
    health.warn(('endpoint answered %d: %s'):format(result.status, where), {
      'Check baseUrl; a local server without a model list may still work',
    })
  else
    local why = result.code == 28 and 'timed out' or (result.stderr ~= '' and result.stderr or 'no reply')
    -- A warning: a local model server may simply not be started yet.
    health.warn(('endpoint unreachable: %s: %s'):format(where, why), {
      'Start the provider, or set setup({ baseUrl = ... })',
    })
  end
end

--- Where a client works: its workspace folders (every root it serves), else its root.
---@param client vim.lsp.Client
---@return string
local function where(client)
  local dirs = require('copilot_ls.roots').dirs(client)
  return #dirs > 0 and table.concat(dirs, ', ') or client.root_dir or '?'
end

local function check_clients()
  local clients = vim.lsp.get_clients({ name = config.server_name })
  if #clients == 0 then
    health.info('no copilot_ls client running (it starts when a file opens after setup())')
    return
  end
  for _, client in ipairs(clients) do
    local info = client.server_info or {}
    health.info(
      ('client %d running at %s (server %s %s)'):format(
        client.id,
        where(client),
        info.name or '?',
        info.version or '?'
      )
    )
  end
end

local statuses = { ok = health.ok, warn = health.warn, fail = health.error }

--- The server's own checks, each as ok, warning or error. False when it has none to give
--- (no binary, or a server older than `copilot-ls doctor`).
---@param options copilot_ls.Options
---@param found copilot_ls.Binary?
---@return boolean
local function check_server(options, found)
  -- Prefer the running server of the cwd's project: its checks are over what it was sent.
  local cwd = vim.fn.getcwd()
  local clients = vim.lsp.get_clients({ name = config.server_name })
  local function rank(client)
    local roots = require('copilot_ls.roots').dirs(client)
    return (client.root_dir == cwd or vim.tbl_contains(roots, cwd)) and 0 or 1
  end
  table.sort(clients, function(a, b)
    return rank(a) < rank(b)
  end)
  local client = vim.tbl_filter(doctor.offered_by, clients)[1]
  if not client and not found then
    health.info('skipped: no server binary to ask')
    return false
  end
  local checks, err, note, origin
  if client then
    checks, err, note = doctor.from_client(client)
    origin = ('from the running server (client %d at %s), over the settings the plugin sent it'):format(
      client.id,
      where(client)
    )
  else
    ---@cast found -nil
    checks, err, note = doctor.from_cli(found.path, options, cwd)
    origin = ("from `copilot-ls doctor --workspace %s` with setup()'s settings (no server running)"):format(cwd)
  end
  if not checks then
    local advice = note == true
        and ('Update copilot-ls to %s (the plugin\'s version), which has `copilot-ls doctor`'):format(
          require('copilot_ls').version
        )
      or 'Run `copilot-ls doctor` in a shell to see what it does'
    health.warn('the server\'s own checks are not available: ' .. tostring(err), { advice })
    return false
  end
  health.info(origin .. (type(note) == 'string' and ('; ' .. note) or ''))
  for _, check in ipairs(checks) do
    local report = statuses[check.status] or health.warn
    -- The editor's form of the advice when the server gives one (settings by their
    -- names in an editor, not environment variables), else its text.
    local detail = check.editor or check.detail
    local text = detail ~= '' and (check.name .. ': ' .. detail) or check.name
    if not statuses[check.status] then
      text = ('%s (status %q)'):format(text, check.status)
    end
    report(text)
  end
  return true
end

--- Where a setting that says `editor` came from, if any: the server's environment, or
--- vim.lsp.config() / a running client (settings or initializationOptions). setup()
--- refuses it (config.lua), and says so in the lines of check_setup_problems().
---@return string[] sources
local function editor_provider_sources()
  local sources = {}
  if vim.env.COPILOT_LS_PROVIDER == 'editor' then
    table.insert(sources, '$COPILOT_LS_PROVIDER')
  end
  local function has_editor(settings)
    return type(settings) == 'table'
      and (settings.provider == 'editor' or vim.tbl_get(settings, config.settings_section, 'provider') == 'editor')
  end
  local lsp_config = vim.lsp.config[config.server_name] or {}
  if has_editor(lsp_config.settings) or has_editor(lsp_config.init_options) then
    table.insert(sources, "vim.lsp.config('" .. config.server_name .. "')")
  end
  for _, client in ipairs(vim.lsp.get_clients({ name = config.server_name })) do
    if has_editor(client.settings) or has_editor(client.config and client.config.init_options) then
      table.insert(sources, ('the running client %d'):format(client.id))
    end
  end
  return sources
end

-- What to use instead of the editor's models.
local editor_advice = {
  'setup({ provider = "openai" }) with $OPENAI_API_KEY, or "anthropic" with $ANTHROPIC_API_KEY',
  'or a local OpenAI-compatible server: setup({ provider = "openai", baseUrl = "http://127.0.0.1:11434/v1", model = "..." })',
  'or setup({ provider = "none" }): answers list the places copilot-ls finds, without a model',
}

--- What the last setup() refused, and `provider = "editor"` from wherever it was set.
local function check_setup_problems()
  for _, problem in ipairs(config.problems or {}) do
    if problem:find('"editor"', 1, true) and problem:find('^option provider') then
      health.error('setup() refused ' .. problem:gsub('^option ', ''), editor_advice)
    else
      health.warn('setup() refused ' .. problem:gsub('^option ', ''), { 'See :help copilot_ls-setup' })
    end
  end
  for _, source in ipairs(editor_provider_sources()) do
    health.error(('provider "editor" (from %s): %s'):format(source, config.editor_provider), editor_advice)
  end
end

--- The settings the plugin sends and the environment the server reads, as facts: the
--- server's doctor (below) judges them, the key's variable included.
local function show_settings(options)
  local sent = config.server_settings(options)
  local keys = vim.tbl_keys(sent)
  table.sort(keys)
  for _, key in ipairs(keys) do
    health.info(('%s: %s (from setup())'):format(key, vim.inspect(sent[key])))
  end
  if #keys == 0 then
    health.info("none from setup(): the server uses the environment's and its own defaults")
  end
  local names = vim.tbl_values(env_names)
  table.insert(names, 'COPILOT_LS_HISTORY')
  table.sort(names)
  for _, variable in ipairs(names) do
    if (vim.env[variable] or '') ~= '' then
      health.info(('$%s = %s (the server reads it for a setting setup() leaves unset)'):format(
        variable,
        vim.inspect(vim.env[variable])
      ))
    end
  end
end

function M.check()
  health.start('copilot-ls')
  if not compat.supported() then
    -- Nothing else can run here: the other modules need Neovim 0.11's API.
    health.error(
      ('Neovim %s: copilot-ls needs Neovim %s or newer (vim.lsp.config, vim.lsp.enable)'):format(
        compat.running(),
        compat.needed
      ),
      compat.advice
    )
    return
  end
  binary = require('copilot_ls.binary')
  config = require('copilot_ls.config')
  doctor = require('copilot_ls.doctor')
  env_names = config.env_names
  health.ok('Neovim ' .. tostring(vim.version()))
  health.info(('plugin %s at %s'):format(require('copilot_ls').version, binary.plugin_dir))
  local options = config.options
  local found = check_binary(options)
  check_clients()

  health.start('copilot-ls: settings the plugin sends')
  check_setup_problems()
  show_settings(options)

  health.start('copilot-ls: the server\'s checks (copilot-ls doctor)')
  if not check_server(options, found) then
    -- Only without the server's checks: the plugin's own stand in for them.
    health.info("the plugin's own checks instead:")
    local provider, settings = check_provider(options)
    check_key(options, provider)
    check_endpoint(options, provider, settings)
  end
end

return M
