-- Shared by the specs: paths, the plugin on the runtimepath, a fresh copy of the fixture
-- workspace, the scripted fake provider, captured notifications, and cleanup.
local H = {}

H.test_dir = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
H.plugin_dir = vim.fs.dirname(H.test_dir)
H.repo = vim.fs.dirname(vim.fs.dirname(H.plugin_dir))
H.server_bin = vim.env.COPILOT_LS_BIN or (H.repo .. '/target/debug/copilot-ls')
H.fake_bin = vim.env.FAKE_PROVIDER_BIN or (H.repo .. '/target/debug/fake-provider')
H.fixture = H.repo .. '/fixtures/workspace'
-- The API key the specs hand the server (by variable name, as users do).
H.key_env = 'COPILOT_LS_TEST_KEY'
H.key = 'sk-test-do-not-leak-4242'
-- How long anything the specs wait for may take; generous for a loaded CI machine.
H.timeout = 15000

local loaded = false

--- Puts the plugin on the runtimepath and sources plugin/ as Neovim would at startup
--- (-u NONE skips plugins).
function H.load_plugin()
  if loaded then
    return
  end
  loaded = true
  vim.opt.runtimepath:prepend(H.plugin_dir)
  vim.cmd('filetype on')
  vim.cmd('runtime! plugin/copilot_ls.lua')
end

---@param ms integer
---@param predicate fun(): any
---@param what string what was awaited, for the failure message
function H.wait(ms, predicate, what)
  local ok = vim.wait(ms, function()
    return predicate() and true or false
  end, 10)
  assert(ok, 'timed out waiting for ' .. what)
end

--- A fresh copy of the fixture workspace in a temp dir outside any git repository, so
--- its root is the cwd the spec moves to.
---@return string dir
function H.workspace()
  local dir = vim.fn.tempname() .. '-ws'
  local result = vim.system({ 'cp', '-R', H.fixture, dir }):wait()
  assert(result.code == 0, 'copying the fixture failed: ' .. (result.stderr or ''))
  dir = vim.fs.normalize(vim.uv.fs_realpath(dir))
  assert(not vim.fs.root(dir, '.git'), dir .. ' is inside a git repository; set TMPDIR elsewhere')
  return dir
end

H.providers = {}

---@class FakeProvider
---@field port integer
---@field url string the OpenAI baseUrl
---@field requests fun(): table[] the requests recorded so far
---@field stop fun()

--- Starts the scripted fake provider with these steps and waits for its port.
---@param steps table[]
---@return FakeProvider
function H.fake_provider(steps)
  assert(
    vim.fn.executable(H.fake_bin) == 1,
    'fake provider binary not found: ' .. H.fake_bin .. ' (set FAKE_PROVIDER_BIN)'
  )
  local dir = vim.fn.tempname() .. '-fake'
  vim.fn.mkdir(dir, 'p')
  local script = dir .. '/script.json'
  local record = dir .. '/record.jsonl'
  vim.fn.writefile({ vim.json.encode({ steps = steps }) }, script)
  local output, errors, port, exited = '', '', nil, nil
  local proc = vim.system({ H.fake_bin, script, '--record', record }, {
    stdout = function(_, data)
      if data then
        output = output .. data
        port = port or tonumber(output:match('^%s*(%d+)%s*\n'))
      end
    end,
    stderr = function(_, data)
      errors = errors .. (data or '')
    end,
  }, function(result)
    exited = result.code
  end)
  H.wait(H.timeout, function()
    return port or exited
  end, 'the fake provider to print its port')
  assert(port, ('the fake provider exited (%s) without a port: %s'):format(exited, errors))
  local provider = {
    port = port,
    url = ('http://127.0.0.1:%d/v1'):format(port),
  }
  function provider.requests()
    if vim.fn.filereadable(record) == 0 then
      return {}
    end
    local requests = {}
    local lines = vim.fn.readfile(record)
    for i, line in ipairs(lines) do
      local ok, request = pcall(vim.json.decode, line)
      if ok then
        table.insert(requests, request)
      elseif i < #lines then
        error(('bad line %d in %s: %s'):format(i, record, request))
      end
      -- else: the provider is still writing the last line; it counts once complete.
    end
    return requests
  end
  function provider.stop()
    if not proc:is_closing() then
      proc:kill('sigterm')
    end
  end
  table.insert(H.providers, provider)
  return provider
end

H.servers = {}

--- A loopback HTTP server answering every request with `status` and `body`; records
--- each request's head (request line and headers) as text.
---@param status integer
---@param body string
---@return {url: string, heads: string[]}
function H.http_stub(status, body)
  local server = assert(vim.uv.new_tcp())
  assert(server:bind('127.0.0.1', 0))
  local stub = { heads = {} }
  server:listen(16, function()
    local socket = assert(vim.uv.new_tcp())
    server:accept(socket)
    local data = ''
    socket:read_start(function(_, chunk)
      if not chunk then
        socket:close()
        return
      end
      data = data .. chunk
      if data:find('\r\n\r\n', 1, true) then
        table.insert(stub.heads, data)
        socket:read_stop()
        socket:write(
          ('HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s'):format(status, #body, body),
          function()
            socket:close()
          end
        )
      end
    end)
  end)
  stub.url = ('http://127.0.0.1:%d/v1'):format(server:getsockname().port)
  table.insert(H.servers, server)
  return stub
end

--- A loopback OpenAI-compatible provider that streams `pieces` of text as server-sent
--- events, one every `delay_ms`, in this process: `written[i]` is the vim.uv.hrtime() at
--- which piece i went to the socket, on the same clock as the client's.
---@param pieces string[]
---@param delay_ms integer
---@return {url: string, written: integer[], requests: integer}
function H.sse_stub(pieces, delay_ms)
  local server = assert(vim.uv.new_tcp())
  assert(server:bind('127.0.0.1', 0))
  local stub = { written = {}, requests = 0 }
  local function event(delta, finish)
    return 'data: '
      .. vim.json.encode({
        id = 'chatcmpl-stub',
        object = 'chat.completion.chunk',
        created = 0,
        model = 'fake-model',
        choices = { { index = 0, delta = delta, finish_reason = finish or vim.NIL } },
      })
      .. '\n\n'
  end
  server:listen(16, function()
    local socket = assert(vim.uv.new_tcp())
    server:accept(socket)
    local data = ''
    socket:read_start(function(_, chunk)
      if not chunk then
        return
      end
      data = data .. chunk
      local head_end = data:find('\r\n\r\n', 1, true)
      local length = tonumber(data:match('[Cc]ontent%-[Ll]ength:%s*(%d+)'))
      if not head_end or (length and #data < head_end + 3 + length) then
        return
      end
      socket:read_stop()
      stub.requests = stub.requests + 1
      socket:write('HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n')
      socket:write(event({ role = 'assistant', content = '' }))
      local timer = assert(vim.uv.new_timer())
      local i = 0
      timer:start(delay_ms, delay_ms, function()
        i = i + 1
        if i <= #pieces then
          stub.written[i] = vim.uv.hrtime()
          socket:write(event({ content = pieces[i] }))
          return
        end
        timer:stop()
        timer:close()
        socket:write(event({}, 'stop') .. 'data: [DONE]\n\n', function()
          socket:shutdown(function()
            socket:close()
          end)
        end)
      end)
    end)
  end)
  stub.url = ('http://127.0.0.1:%d/v1'):format(server:getsockname().port)
  table.insert(H.servers, server)
  return stub
end

H.notifications = {}
local original_notify = vim.notify

--- Records vim.notify calls (and still shows nothing: headless output stays readable).
function H.capture_notify()
  H.notifications = {}
  vim.notify = function(msg, level)
    table.insert(H.notifications, { msg = msg, level = level or vim.log.levels.INFO })
  end
end

---@param level integer
---@return {msg: string, level: integer}[]
function H.notified(level)
  return vim.tbl_filter(function(n)
    return n.level == level
  end, H.notifications)
end

--- The setup() options of the specs: the test's server against a fake provider (OpenAI
--- wire format), the key by variable name; `opts` on top. Sets the key's variable.
---@param provider FakeProvider?
---@param opts? table more setup() options
---@return table
function H.setup_options(provider, opts)
  vim.env[H.key_env] = H.key
  return vim.tbl_extend('force', {
    cmd = { H.server_bin },
    provider = 'openai',
    baseUrl = provider and provider.url or 'http://127.0.0.1:9/v1',
    model = 'fake-model',
    apiKeyEnv = H.key_env,
    stream = false,
    maxSteps = 6,
    requestTimeoutSecs = 20,
  }, opts or {})
end

--- setup() against a fake provider (OpenAI wire format), cd into a fresh workspace copy,
--- open `file` and wait for the client to be initialized and attached.
---@param provider FakeProvider?
---@param opts? table more setup() options
---@param file? string
---@return {ws: string, client: vim.lsp.Client, bufnr: integer}
function H.session(provider, opts, file)
  H.load_plugin()
  local ws = H.workspace()
  vim.cmd.cd(vim.fn.fnameescape(ws))
  local setup = H.setup_options(provider, opts)
  assert(require('copilot_ls').setup(setup), 'setup() failed: ' .. vim.inspect(H.notifications))
  vim.cmd.edit(file or 'src/rate_limit.rs')
  local bufnr = vim.api.nvim_get_current_buf()
  local client = H.wait_client(bufnr)
  return { ws = ws, client = client, bufnr = bufnr }
end

--- The copilot_ls client attached to bufnr, once initialized.
---@param bufnr integer
---@return vim.lsp.Client
function H.wait_client(bufnr)
  local client
  H.wait(H.timeout, function()
    client = vim.lsp.get_clients({ name = 'copilot_ls', bufnr = bufnr })[1]
    return client and client.initialized
  end, 'copilot_ls to attach to ' .. vim.api.nvim_buf_get_name(bufnr))
  return client
end

--- Records the params of every request the client sends (the client's own method is
--- looked up through its metatable, so an instance field shadows it).
---@param client vim.lsp.Client
---@return table<string, table[]> method -> params sent
function H.spy_requests(client)
  local sent = {}
  client.request = function(self, method, params, ...)
    sent[method] = sent[method] or {}
    table.insert(sent[method], params)
    return getmetatable(self).__index.request(self, method, params, ...)
  end
  return sent
end

--- Waits for the last ask to leave the `waiting` state and returns it.
---@return copilot_ls.Ask
function H.wait_ask()
  H.wait(H.timeout, function()
    local last = require('copilot_ls').last()
    return last and last.status ~= 'waiting'
  end, 'the ask to finish')
  return require('copilot_ls').last()
end

-- Where screen dumps go (run.sh keeps them with the run's other artifacts).
H.screens = vim.env.NVIM_TEST_SCREENS or (vim.fn.tempname() .. '-screens')

--- The screen as a user would see it (Neovim keeps its grid headless too: windows,
--- floats, folds and `~` rows), written to `H.screens/<name>.txt`. Returns its rows.
---@param name string
---@return string[]
function H.screen(name)
  vim.cmd('redraw!')
  local rows = {}
  for row = 1, vim.o.lines do
    local cells = {}
    for col = 1, vim.o.columns do
      table.insert(cells, vim.fn.screenstring(row, col))
    end
    table.insert(rows, (table.concat(cells):gsub('%s+$', '')))
  end
  vim.fn.mkdir(H.screens, 'p')
  vim.fn.writefile(rows, ('%s/%s.txt'):format(H.screens, name))
  return rows
end

---@param bufnr integer
---@return string
function H.text(bufnr)
  return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n')
end

---@param id string
---@param name string
---@param arguments table
---@return table a scripted tool call of the fake provider
function H.tool_call(id, name, arguments)
  return { id = id, name = name, arguments = arguments }
end

--- A scripted model turn that ends the loop with the answer tool.
---@param text string
---@param citations? table[]
---@param extra? table more fields of the step (delay_ms, ...)
function H.answer_turn(text, citations, extra)
  return vim.tbl_extend('force', {
    tool_calls = {
      H.tool_call('call_answer', 'answer', { answer = text, citations = citations or {} }),
    },
  }, extra or {})
end

---@return string the thread buffer's text
function H.thread_text()
  return H.text(require('copilot_ls.answer').bufnr)
end

--- Row (1-based) of the first thread line containing `text`.
---@param text string
---@return integer
function H.row_of(text)
  local lines = vim.api.nvim_buf_get_lines(require('copilot_ls.answer').bufnr, 0, -1, false)
  for i, line in ipairs(lines) do
    if line:find(text, 1, true) then
      return i
    end
  end
  error(('%q not in the thread:\n%s'):format(text, table.concat(lines, '\n')))
end

--- Types keys as the user would, waiting for what they map to.
---@param keys string
function H.press(keys)
  vim.api.nvim_feedkeys(vim.keycode(keys), 'mx', false)
end

--- Feeds one `$/progress` to the client as its RPC layer does with a notification.
---@param client vim.lsp.Client
---@param token string
---@param value table
function H.deliver(client, token, value)
  client:_notification('$/progress', { token = token, value = value })
end

--- Makes tree-sitter parse as it does on a slow machine or in a long buffer: every parse
--- Neovim starts for drawing (the highlighter's) yields and ends on a later event-loop
--- turn, as one over its 3 ms budget does. Returns the function that restores the budget.
---@return fun()
function H.slow_treesitter()
  local async_parse = require('vim.treesitter.languagetree')._async_parse
  for i = 1, math.huge do
    local name, budget = debug.getupvalue(async_parse, i)
    assert(name, 'no parse budget found in this Neovim (LanguageTree:_async_parse)')
    if name == 'default_parse_timeout_ns' then
      debug.setupvalue(async_parse, i, 1)
      return function()
        debug.setupvalue(async_parse, i, budget)
      end
    end
  end
  error('unreachable')
end

---@param bufnr integer
---@param code 'citation'|'suggested-edit'
---@return vim.Diagnostic[] the server's diagnostics of that kind in bufnr
function H.diagnostics(bufnr, code)
  return vim.tbl_filter(function(d)
    return d.source == 'copilot' and d.code == code
  end, vim.diagnostic.get(bufnr))
end

--- Fails when anything was notified at ERROR level, saying what.
function H.assert_no_errors()
  local errors = H.notified(vim.log.levels.ERROR)
  assert(#errors == 0, 'errors were notified: ' .. vim.inspect(errors))
end

--- Undoes everything a spec did: servers, providers, windows, buffers, lists, state.
function H.cleanup()
  vim.notify = original_notify
  for _, provider in ipairs(H.providers) do
    provider.stop()
  end
  H.providers = {}
  for _, server in ipairs(H.servers) do
    server:close()
  end
  H.servers = {}
  if package.loaded['copilot_ls.ask'] then
    require('copilot_ls.ask').last = nil
    require('copilot_ls.ask').origin = nil
  end
  if package.loaded['copilot_ls.config'] then
    local config = require('copilot_ls.config')
    config.options = vim.deepcopy(config.defaults)
  end
  if loaded then
    vim.lsp.enable('copilot_ls', false)
    -- Assignment replaces (vim.lsp.config() would merge): the next spec starts from
    -- lsp/copilot_ls.lua alone.
    vim.lsp.config['copilot_ls'] = {}
  end
  -- Stop clients until none is left: a start that vim.lsp.enable() scheduled for a file
  -- the spec opened just before it ended can still be on its way. The marker, scheduled
  -- after such starts, says they ran; clients still starting count too (get_clients()
  -- leaves them out): one left running would serve the next spec, whatever its root.
  local flushed = false
  vim.schedule(function()
    flushed = true
  end)
  H.wait(H.timeout, function()
    local clients = vim.lsp.get_clients({ _uninitialized = true })
    for _, client in ipairs(clients) do
      client:stop(true)
    end
    return flushed and #clients == 0
  end, 'the clients to stop')
  vim.cmd('silent! tabonly')
  vim.cmd('silent! only')
  vim.cmd('silent! %bwipeout!')
  -- The buffer of the last window can outlive that (it stays shown while the others go);
  -- a file left loaded would start a client for its root in the next spec's setup().
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(buf) ~= '' then
      pcall(vim.api.nvim_buf_delete, buf, { force = true })
    end
  end
  vim.fn.setqflist({}, 'f')
  vim.cmd('silent! messages clear')
  vim.cmd.cd(vim.fn.fnameescape(vim.fs.dirname(vim.fn.tempname())))
end

return H
