-- Turns a JSON-RPC error from the server into one line for vim.notify that says what
-- went wrong and what to do about it.
local M = {}

M.codes = {
  invalid_params = -32602,
  request_cancelled = -32800,
  request_failed = -32803,
  server_not_initialized = -32002,
}

--- The variable holding the API key, as the server would pick it (PROTOCOL.md section 2).
---@param options copilot_ls.Options
---@return string
local function key_env(options)
  if options.apiKeyEnv then
    return options.apiKeyEnv
  end
  local provider = options.provider or vim.env.COPILOT_LS_PROVIDER
  if provider == 'anthropic' then
    return 'ANTHROPIC_API_KEY'
  end
  if provider == 'openai' then
    return 'OPENAI_API_KEY'
  end
  return 'OPENAI_API_KEY or ANTHROPIC_API_KEY'
end

-- Checked in order against the server's message; the first match gives the fix. The
-- connection and timeout cases come first because their messages carry a URL whose port
-- could look like a status code; status codes must stand alone (%f frontiers).
local fixes = {
  {
    { 'cannot connect', 'connection refused', 'connect error', 'dns error' },
    function()
      return 'check that the provider runs at baseUrl, or set setup({ baseUrl = ... })'
    end,
  },
  {
    -- The server says `provider did not answer within 120 s (…)`.
    { 'timed out', 'timeout', 'did not answer within' },
    function()
      return 'raise setup({ requestTimeoutSecs = ... }) or try a faster model'
    end,
  },
  {
    { '%f[%d]401%f[%D]', '%f[%d]403%f[%D]', 'unauthori[sz]ed', 'forbidden', 'api key' },
    function(o)
      return ('check the API key in $%s (or setup({ apiKeyEnv = ... }))'):format(key_env(o))
    end,
  },
  {
    { '%f[%d]404%f[%D]', 'model not found', 'no such model' },
    function()
      return 'check model and baseUrl in setup()'
    end,
  },
  {
    { '%f[%d]429%f[%D]', 'rate limit' },
    function()
      return 'the provider is rate limiting; wait a moment and ask again'
    end,
  },
  {
    { '%f[%d]5%d%d%f[%D]' },
    function()
      return 'the provider failed; try again later'
    end,
  },
}

--- The notification's form of format(): made to fit `width` columns where it can, so it
--- does not wrap into a hit-enter prompt. The fix loses its "(or ...)" alternative first,
--- then the server's message is cut (never below `min_message` characters). The thread
--- shows the whole message.
---@param err lsp.ResponseError|table|string
---@param options copilot_ls.Options
---@param width integer
---@param min_message? integer
---@return string
function M.short(err, options, width, min_message)
  min_message = min_message or 32
  local full = M.format(err, options)
  if vim.fn.strdisplaywidth(full) <= width then
    return full
  end
  local message, fix = full:match('^copilot%-ls: (.-) %(fix: (.*)%)$')
  if not message then
    return full
  end
  fix = fix:gsub(' %(or .*%)$', '')
  local rest = vim.fn.strdisplaywidth('copilot-ls:  (fix: )' .. fix)
  local room = math.max(min_message, width - rest)
  if vim.fn.strchars(message) > room then
    message = vim.fn.strcharpart(message, 0, room - 1) .. '…'
  end
  return ('copilot-ls: %s (fix: %s)'):format(message, fix)
end

--- One line: `copilot-ls: <server message> (fix: <what to do>)`.
---@param err lsp.ResponseError|table|string
---@param options copilot_ls.Options
---@param max_message? integer cut the server's message to this many characters (a
---   provider's error body can be long; a notification that wraps asks for hit-enter)
---@return string
function M.format(err, options, max_message)
  local code = type(err) == 'table' and err.code or nil
  local message = type(err) == 'table' and tostring(err.message or '') or tostring(err)
  message = vim.trim((message:gsub('%s*\n%s*', ' ')))
  local lower = message:lower()

  local fix
  if code == M.codes.invalid_params then
    fix = 'ask a non-empty question, e.g. :CopilotAsk where is the rate limit configured?'
  elseif code == M.codes.server_not_initialized then
    fix = 'the server is still starting; ask again in a moment'
  elseif code == M.codes.request_failed then
    for _, entry in ipairs(fixes) do
      for _, pattern in ipairs(entry[1]) do
        if lower:find(pattern) then
          fix = entry[2](options)
          break
        end
      end
      if fix then
        break
      end
    end
    fix = fix or 'see :checkhealth copilot_ls and :LspLog'
  else
    fix = 'see :LspLog'
  end
  if message == '' then
    message = ('error %s'):format(tostring(code))
  end
  if max_message and vim.fn.strchars(message) > max_message then
    message = vim.fn.strcharpart(message, 0, max_message - 1) .. '…'
  end
  return ('copilot-ls: %s (fix: %s)'):format(message, fix)
end

return M
