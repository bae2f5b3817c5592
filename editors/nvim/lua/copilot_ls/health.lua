-- :checkhealth copilot_ls: the server binary and its version, the provider, the API key.
local config = require('copilot_ls.config')

local M = {}

local health = vim.health

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

local function check_binary(options)
  local cmd = config.cmd(options)
  local exe = cmd[1]
  local path = vim.fn.exepath(exe)
  if path == '' then
    health.error(
      ('server binary %q not found (from %s)'):format(exe, config.cmd_source(options)),
      {
        'Build it with `cargo build --release` and put target/release/copilot-ls on PATH',
        'or set require("copilot_ls").setup({ cmd = { "/path/to/copilot-ls" } })',
        'or export COPILOT_LS_PATH=/path/to/copilot-ls',
      }
    )
    return
  end
  local ok, result = pcall(function()
    return vim.system({ path, '--version' }, { text = true }):wait(5000)
  end)
  local version = ok and result.code == 0 and vim.trim(result.stdout or '') or ''
  if version == '' then
    local why = not ok and tostring(result)
      or result.code ~= 0 and ('exit code %d'):format(result.code)
      or 'no output'
    health.error(
      ('%s found (from %s) but `--version` failed: %s'):format(
        path,
        config.cmd_source(options),
        why
      ),
      { 'Rebuild copilot-ls, or point setup({ cmd }) at a working binary' }
    )
    return
  end
  health.ok(
    ('%s: %s (from %s)'):format(path, version:match('[^\n]*'), config.cmd_source(options))
  )
end

local function check_provider(options)
  local provider, source = effective_provider(options)
  if provider == 'none' then
    health.warn('provider: none, from ' .. source .. '; answers only list relevant places', {
      'Set ANTHROPIC_API_KEY or OPENAI_API_KEY',
      'or setup({ provider = "openai", baseUrl = "http://127.0.0.1:11434/v1", model = "..." })',
    })
    return provider
  end
  if provider ~= 'openai' and provider ~= 'anthropic' then
    health.error(('provider %q (from %s) is not one of openai, anthropic, none'):format(
      provider,
      source
    ))
    return provider
  end
  local base_url = options.baseUrl or vim.env.COPILOT_LS_BASE_URL
  local model = options.model or vim.env.COPILOT_LS_MODEL
  health.ok(
    ('provider: %s (from %s), baseUrl: %s, model: %s'):format(
      provider,
      source,
      base_url or 'default',
      model or 'default'
    )
  )
  return provider
end

local function check_key(options, provider)
  if provider ~= 'openai' and provider ~= 'anthropic' then
    return
  end
  local variable = options.apiKeyEnv
    or (provider == 'anthropic' and 'ANTHROPIC_API_KEY' or 'OPENAI_API_KEY')
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

local function check_clients()
  local clients = vim.lsp.get_clients({ name = config.server_name })
  if #clients == 0 then
    health.info('no copilot_ls client running (it starts when a file opens after setup())')
    return
  end
  for _, client in ipairs(clients) do
    health.info(('client %d running at %s'):format(client.id, client.root_dir or '?'))
  end
end

function M.check()
  health.start('copilot-ls')
  if vim.fn.has('nvim-0.11') == 0 then
    health.error('Neovim 0.11 or newer is needed (vim.lsp.config)')
  else
    health.ok('Neovim ' .. tostring(vim.version()))
  end
  local options = config.options
  check_binary(options)
  local provider = check_provider(options)
  check_key(options, provider)
  check_clients()
end

return M
