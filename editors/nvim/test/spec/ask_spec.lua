-- End to end: the commands against the real copilot-ls and the scripted fake provider,
-- in a fresh copy of the fixture workspace per spec.
local H = require('helpers')

local INFO, ERROR = vim.log.levels.INFO, vim.log.levels.ERROR

---@param name string
---@param arguments table
local function tool_call(id, name, arguments)
  return { id = id, name = name, arguments = arguments }
end

--- A model turn that ends the loop with the answer tool.
local function answer_turn(text, citations, extra)
  return vim.tbl_extend('force', {
    tool_calls = {
      tool_call('call_answer', 'answer', { answer = text, citations = citations or {} }),
    },
  }, extra or {})
end

local function answer_text()
  return H.text(require('copilot_ls.answer').bufnr)
end

--- Puts the cursor of the current window on the first line containing `text`.
local function cursor_to(text)
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  for i, line in ipairs(lines) do
    local col = line:find(text, 1, true)
    if col then
      vim.api.nvim_win_set_cursor(0, { i, col - 1 })
      return
    end
  end
  error(('%q not in the buffer:\n%s'):format(text, table.concat(lines, '\n')))
end

local function press(keys)
  vim.api.nvim_feedkeys(vim.keycode(keys), 'mx', false)
end

---@param bufnr integer
---@param code string
local function copilot_diagnostics(bufnr, code)
  return vim.tbl_filter(function(d)
    return d.source == 'copilot' and d.code == code
  end, vim.diagnostic.get(bufnr))
end

local function messages()
  return vim.api.nvim_exec2('messages', { output = true }).output
end

local RATE_LIMIT_STEPS = {
  { tool_calls = { tool_call('call_1', 'search_code', { pattern = 'rate_limit' }) } },
  -- The delay keeps the ask waiting long enough to see its progress in the window.
  answer_turn('Each request goes through `RateLimiter::check`; the burst is read at src/main.rs:8.', {
    { path = 'src/rate_limit.rs', line = 56, end_line = 61, note = 'check admits or refuses' },
    { path = 'src/config.rs', line = 15 },
  }, { delay_ms = 1500 }),
}

describe('copilot/ask from Neovim', function()
  before_each(function()
    H.load_plugin()
    H.capture_notify()
  end)
  after_each(H.cleanup)

  it('asks from a command: float, progress, citations, quickfix, diagnostics', function()
    local provider = H.fake_provider(RATE_LIMIT_STEPS)
    -- Streaming here (the other specs do not): the server's default, over SSE.
    local s = H.session(provider, { stream = true })
    local sent = H.spy_requests(s.client)
    local progress, statuses = {}, {}
    vim.api.nvim_create_autocmd('LspProgress', {
      callback = function(ev)
        local value = ev.data.params.value
        if type(value) == 'table' then
          table.insert(progress, { token = ev.data.params.token, kind = value.kind, title = value.title, message = value.message })
          table.insert(statuses, vim.lsp.status())
        end
      end,
    })
    -- The user's own quickfix list must survive (:colder).
    vim.fn.setqflist({}, ' ', { title = 'mine', items = { { filename = 'src/main.rs', lnum = 1, text = 'x' } } })

    vim.cmd('CopilotAsk how are requests rate limited?')
    local answer = require('copilot_ls.answer')
    assert.is_true(answer.is_open())
    assert.are.equal('editor', vim.api.nvim_win_get_config(answer.winid).relative)
    assert.are.equal(answer.winid, vim.api.nvim_get_current_win())
    assert.are.equal('markdown', vim.bo[answer.bufnr].filetype)
    H.wait(H.timeout, function()
      return answer_text():find('- search_code: rate_limit', 1, true)
    end, 'the progress in the answer window')
    -- What it waits for: the tool call running, or the model once its step arrived.
    local waiting = answer_text():match('\n(_[^\n]*…_)\n')
    assert.is_truthy(
      waiting == '_Running search_code…_' or waiting == '_Waiting for the model…_',
      answer_text()
    )

    local ask = H.wait_ask()
    assert.are.equal('done', ask.status, ask.error)
    local text = answer_text()
    assert.matches('> how are requests rate limited?', text, 1, true)
    assert.matches('Each request goes through `RateLimiter::check`', text, 1, true)
    assert.matches('## Citations', text, 1, true)
    assert.matches('- src/rate_limit.rs:56-61 — check admits or refuses', text, 1, true)
    assert.matches('- src/config.rs:15', text, 1, true)
    assert.is_nil(text:find('Waiting', 1, true))
    assert.are.equal(0, #H.notified(ERROR))

    -- AskParams as sent.
    local params = sent['copilot/ask'][1]
    assert.are.equal('how are requests rate limited?', params.question)
    assert.are.same({ uri = vim.uri_from_bufnr(s.bufnr) }, params.textDocument)
    assert.is_nil(params.range)
    assert.are.equal('string', type(params.conversationId))
    assert.are.equal(ask.token, params.workDoneToken)

    -- Progress on our token: begin (titled with the product's name, not the server's
    -- `Copilot`), a report per tool call, end.
    local function ours()
      return vim.tbl_filter(function(p)
        return p.token == ask.token
      end, progress)
    end
    H.wait(H.timeout, function()
      local events = ours()
      return #events > 0 and events[#events].kind == 'end'
    end, 'the progress to end')
    ours = ours()
    assert.are.equal('begin', ours[1].kind)
    assert.are.equal('copilot-ls', ours[1].title)
    assert.are.equal('end', ours[#ours].kind)
    assert.is_truthy(vim.iter(ours):find(function(p)
      return p.kind == 'report' and p.message == 'search_code: rate_limit'
    end))
    assert.is_truthy(vim.iter(statuses):find(function(status)
      return status:find('copilot-ls: search_code: rate_limit', 1, true)
    end), vim.inspect(statuses))

    -- Settings reached the server: baseUrl (we are here), model, the key by its variable.
    local request = provider.requests()[1]
    assert.are.equal('fake-model', request.body.model)
    assert.is_true(request.body.stream)
    assert.are.equal('Bearer ' .. H.key, request.headers.authorization)

    -- Quickfix: a new list with a title, the user's list one :colder away.
    local qf = vim.fn.getqflist({ title = 1, items = 1 })
    assert.are.equal('copilot-ls: how are requests rate limited?', qf.title)
    assert.are.equal(2, #qf.items)
    assert.are.equal(s.ws .. '/src/rate_limit.rs', vim.api.nvim_buf_get_name(qf.items[1].bufnr))
    assert.are.equal(56, qf.items[1].lnum)
    assert.are.equal(61, qf.items[1].end_lnum)
    assert.are.equal('check admits or refuses', qf.items[1].text)
    assert.are.equal(s.ws .. '/src/config.rs', vim.api.nvim_buf_get_name(qf.items[2].bufnr))
    assert.are.equal(15, qf.items[2].lnum)
    vim.cmd('silent colder')
    assert.are.equal('mine', vim.fn.getqflist({ title = 1 }).title)

    -- The server's citation diagnostics arrive untouched.
    H.wait(H.timeout, function()
      return #copilot_diagnostics(s.bufnr, 'citation') > 0
    end, 'the citation diagnostics')
    local diagnostic = copilot_diagnostics(s.bufnr, 'citation')[1]
    assert.are.equal(55, diagnostic.lnum)
    assert.are.equal(vim.diagnostic.severity.INFO, diagnostic.severity)
  end)

  it('jumps to a citation with <CR>, closes with q, reopens with :CopilotAnswer', function()
    local s = H.session(H.fake_provider(RATE_LIMIT_STEPS))
    local source_win = vim.api.nvim_get_current_win()
    vim.cmd('CopilotAsk how are requests rate limited?')
    assert.are.equal('done', H.wait_ask().status)
    local answer = require('copilot_ls.answer')

    -- A line of the citation list.
    cursor_to('- src/config.rs:15')
    press('<CR>')
    assert.is_false(answer.is_open())
    assert.are.equal(source_win, vim.api.nvim_get_current_win())
    assert.are.equal(s.ws .. '/src/config.rs', vim.api.nvim_buf_get_name(0))
    assert.are.equal(15, vim.api.nvim_win_get_cursor(0)[1])

    -- A path:line mention in the answer's own text.
    vim.cmd('CopilotAnswer')
    assert.is_true(answer.is_open())
    assert.are.equal(answer.winid, vim.api.nvim_get_current_win())
    cursor_to('src/main.rs:8')
    press('<CR>')
    assert.are.equal(s.ws .. '/src/main.rs', vim.api.nvim_buf_get_name(0))
    assert.are.equal(8, vim.api.nvim_win_get_cursor(0)[1])

    -- q closes; the answer is kept.
    vim.cmd('CopilotAnswer')
    press('q')
    assert.is_false(answer.is_open())
    assert.are.equal(source_win, vim.api.nvim_get_current_win())
    vim.cmd('CopilotAnswer')
    assert.matches('RateLimiter::check', answer_text(), 1, true)
    assert.are.equal(0, #H.notified(ERROR))
  end)

  it('jumps to a citation in a modified buffer without :edit (no E37)', function()
    local s = H.session(H.fake_provider(RATE_LIMIT_STEPS))
    local source_win = vim.api.nvim_get_current_win()
    vim.api.nvim_buf_set_lines(s.bufnr, 0, 0, false, { '// an unsaved line' })
    assert.is_true(vim.bo[s.bufnr].modified)
    vim.cmd('messages clear')
    vim.cmd('CopilotAsk how are requests rate limited?')
    assert.are.equal('done', H.wait_ask().status)
    cursor_to('- src/rate_limit.rs:56-61')
    local ok, err = pcall(press, '<CR>')
    assert(ok, err)
    assert.is_nil(messages():find('E37', 1, true), messages())
    assert.is_nil(messages():find('E5108', 1, true), messages())
    assert.are.equal(source_win, vim.api.nvim_get_current_win())
    assert.are.equal(s.bufnr, vim.api.nvim_get_current_buf())
    assert.are.equal(56, vim.api.nvim_win_get_cursor(0)[1])
    -- The unsaved text is still there.
    assert.is_true(vim.bo[s.bufnr].modified)
    assert.are.equal('// an unsaved line', vim.api.nvim_buf_get_lines(s.bufnr, 0, 1, false)[1])

    -- The same from another window showing another modified buffer, with 'nohidden'.
    vim.o.hidden = false
    finally(function()
      vim.o.hidden = true
    end)
    vim.cmd('hide edit src/main.rs')
    local main_buf = vim.api.nvim_get_current_buf()
    vim.api.nvim_buf_set_lines(main_buf, 0, 0, false, { '// unsaved too' })
    vim.cmd('CopilotAnswer')
    cursor_to('- src/config.rs:15')
    ok, err = pcall(press, '<CR>')
    assert(ok, err)
    assert.are.equal(s.ws .. '/src/config.rs', vim.api.nvim_buf_get_name(0))
    assert.are.equal(15, vim.api.nvim_win_get_cursor(0)[1])
    assert.is_true(vim.bo[main_buf].modified)
    assert.are.equal(0, #H.notified(ERROR))
  end)

  it('shows the answer in a split when configured, and jumps in the other window', function()
    local s = H.session(H.fake_provider(RATE_LIMIT_STEPS), { answer = { layout = 'split' } })
    local source_win = vim.api.nvim_get_current_win()
    vim.cmd('CopilotAsk how are requests rate limited?')
    assert.are.equal('done', H.wait_ask().status)
    local answer = require('copilot_ls.answer')
    assert.are.equal('', vim.api.nvim_win_get_config(answer.winid).relative)
    assert.are.equal(2, #vim.api.nvim_tabpage_list_wins(0))
    cursor_to('- src/rate_limit.rs:56-61')
    press('<CR>')
    assert.are.equal(source_win, vim.api.nvim_get_current_win())
    assert.are.equal(s.ws .. '/src/rate_limit.rs', vim.api.nvim_buf_get_name(0))
    assert.are.equal(56, vim.api.nvim_win_get_cursor(0)[1])
    assert.is_true(answer.is_open())
  end)

  it('applies a suggested edit through the code action', function()
    local provider = H.fake_provider({
      {
        tool_calls = {
          tool_call('call_1', 'propose_edit', {
            path = 'src/config.rs',
            old_text = 'read("TOLLBOOTH_BURST", 10)',
            new_text = 'read("TOLLBOOTH_BURST", 20)',
            title = 'Raise the default burst',
          }),
        },
      },
      answer_turn('Raise the default burst to 20.', { { path = 'src/config.rs', line = 15 } }),
    })
    local s = H.session(provider, nil, 'src/config.rs')
    -- lsp/copilot_ls.lua adds documentChanges to Neovim's capabilities, not instead of them.
    assert.is_true(s.client.capabilities.workspace.workspaceEdit.documentChanges)
    assert.is_truthy(s.client.capabilities.workspace.workspaceEdit.resourceOperations)
    assert.is_truthy(s.client.capabilities.textDocument.codeAction)
    vim.cmd('CopilotAsk how do I allow bigger bursts?')
    local ask = H.wait_ask()
    assert.are.equal('done', ask.status, ask.error)
    assert.are.equal('Raise the default burst', ask.result.edits[1].title)
    local text = answer_text()
    assert.matches('## Suggested edits', text, 1, true)
    assert.matches('- Raise the default burst — src/config.rs:15', text, 1, true)

    press('q')
    assert.are.equal(s.bufnr, vim.api.nvim_get_current_buf())
    H.wait(H.timeout, function()
      return #copilot_diagnostics(s.bufnr, 'suggested-edit') > 0
    end, 'the suggested-edit diagnostic')
    assert.are.equal(vim.diagnostic.severity.HINT, copilot_diagnostics(s.bufnr, 'suggested-edit')[1].severity)

    vim.api.nvim_win_set_cursor(0, { 15, 20 })
    local range_params = vim.lsp.util.make_range_params(0, s.client.offset_encoding)
    range_params.context = { diagnostics = {}, triggerKind = 1 }
    local reply = s.client:request_sync('textDocument/codeAction', range_params, H.timeout, s.bufnr)
    assert.is_nil(reply.err)
    local action = vim.iter(reply.result or {}):find(function(a)
      return a.title == 'Copilot: Raise the default burst'
    end)
    assert.is_truthy(action, vim.inspect(reply.result))
    assert.are.equal('quickfix', action.kind)
    -- PROTOCOL.md section 3: documentChanges, and an open document carries its version.
    local changes = action.edit.documentChanges
    assert.is_truthy(changes, 'WorkspaceEdit without documentChanges: ' .. vim.inspect(action.edit))
    assert.are.equal(vim.uri_from_bufnr(s.bufnr), changes[1].textDocument.uri)
    assert.are.equal(vim.lsp.util.buf_versions[s.bufnr], changes[1].textDocument.version)

    vim.lsp.buf.code_action({
      apply = true,
      filter = function(a)
        return a.title == 'Copilot: Raise the default burst'
      end,
    })
    H.wait(H.timeout, function()
      return vim.api.nvim_buf_get_lines(s.bufnr, 14, 15, false)[1]:find('read("TOLLBOOTH_BURST", 20)', 1, true)
    end, 'the edit to apply')
    assert.is_true(vim.bo[s.bufnr].modified)
    -- The document changed since the suggestion: the server no longer offers it.
    range_params = vim.lsp.util.make_range_params(0, s.client.offset_encoding)
    range_params.context = { diagnostics = {}, triggerKind = 1 }
    reply = s.client:request_sync('textDocument/codeAction', range_params, H.timeout, s.bufnr)
    assert.is_nil(vim.iter(reply.result or {}):find(function(a)
      return a.title == 'Copilot: Raise the default burst'
    end))
    -- Nothing is written to disk before the user saves.
    assert.matches('TOLLBOOTH_BURST", 10', table.concat(vim.fn.readfile(s.ws .. '/src/config.rs'), '\n'), 1, true)
    assert.are.equal(0, #H.notified(ERROR))
  end)

  it(':CopilotStop cancels a running ask without an error, and the server keeps serving', function()
    local provider = H.fake_provider({ { hang = true }, { text = 'Still here.' } })
    local s = H.session(provider)
    vim.cmd('messages clear')
    vim.cmd('CopilotAsk what does main do?')
    local ask = require('copilot_ls').last()
    -- Wait until the server is inside the model call that will never answer.
    H.wait(H.timeout, function()
      return ask.request_id and #provider.requests() == 1
    end, 'the provider to receive the request')
    local id = ask.request_id
    assert.is_truthy(s.client.requests[id])

    vim.cmd('CopilotStop')
    assert.are.equal('cancelled', ask.status)
    assert.matches('_Cancelled._', answer_text(), 1, true)
    -- The server answers the cancelled request (-32800), which ends it in the client.
    H.wait(5000, function()
      return s.client.requests[id] == nil
    end, 'the server to end the cancelled request')
    assert.are.equal(0, #H.notified(ERROR))
    assert.is_nil(messages():lower():find('error', 1, true), messages())
    assert.are.equal('cancelled', ask.status)

    -- The same server answers the next question; the cancelled ask made no more calls.
    vim.cmd('CopilotAsk and now?')
    local next_ask = H.wait_ask()
    assert.are.equal('done', next_ask.status, next_ask.error)
    assert.matches('Still here.', answer_text(), 1, true)
    assert.are.equal(2, #provider.requests())
  end)

  it('starts the server despite a typo in setup(), reporting only the typo', function()
    H.load_plugin()
    local ws = H.workspace()
    vim.cmd.cd(vim.fn.fnameescape(ws))
    local provider = H.fake_provider({ { text = 'Port 8080.' } })
    assert.is_false(require('copilot_ls').setup({
      cmd = { H.server_bin },
      provider = 'openai',
      baseUrl = provider.url,
      modle = 'fake-model',
      apiKeyEnv = H.key_env,
      stream = false,
    }))
    vim.cmd.edit('src/main.rs')
    H.wait_client(vim.api.nvim_get_current_buf())
    vim.cmd('CopilotAsk where is the port read?')
    assert.are.equal('done', H.wait_ask().status)
    assert.matches('Port 8080.', answer_text(), 1, true)
    local errors = H.notified(ERROR)
    assert.are.equal(1, #errors, vim.inspect(errors))
    assert.matches('did you mean `model`?', errors[1].msg, 1, true)
  end)

  it(':CopilotFollowUp continues the conversation; :CopilotAsk starts a new one', function()
    local provider = H.fake_provider({
      { text = 'The burst is 10 by default (src/config.rs:15).' },
      { text = 'It comes from TOLLBOOTH_BURST.' },
      { text = 'A new conversation.' },
    })
    local s = H.session(provider)
    local sent = H.spy_requests(s.client)
    vim.cmd('CopilotAsk what is the default burst?')
    local first = H.wait_ask()
    assert.are.equal('done', first.status, first.error)
    vim.cmd('CopilotFollowUp where does it come from?')
    local second = H.wait_ask()
    assert.are.equal('done', second.status, second.error)
    assert.matches('It comes from TOLLBOOTH_BURST.', answer_text(), 1, true)

    local asks = sent['copilot/ask']
    assert.are.equal(asks[1].conversationId, asks[2].conversationId)
    assert.are.equal(asks[1].conversationId, second.result.conversationId)
    -- The model sees the earlier question in the follow-up's messages.
    local follow_up_body = vim.json.encode(provider.requests()[2].body.messages)
    assert.matches('what is the default burst?', follow_up_body, 1, true)
    assert.matches('where does it come from?', follow_up_body, 1, true)

    vim.cmd('CopilotAsk something else')
    assert.are.equal('done', H.wait_ask().status)
    assert.are_not.equal(asks[1].conversationId, asks[3].conversationId)
  end)

  it('sends a line range or a characterwise selection as range + textDocument', function()
    local provider = H.fake_provider({ { text = 'Lines.' }, { text = 'Characters.' } })
    local s = H.session(provider, nil, 'src/config.rs')
    assert.are.equal('utf-8', s.client.offset_encoding)
    local sent = H.spy_requests(s.client)
    vim.cmd('12,13CopilotAsk what does this do?')
    assert.are.equal('done', H.wait_ask().status)
    local line13 = vim.api.nvim_buf_get_lines(s.bufnr, 12, 13, false)[1]
    assert.are.same({
      start = { line = 11, character = 0 },
      ['end'] = { line = 12, character = #line13 },
    }, sent['copilot/ask'][1].range)
    assert.are.same({ uri = vim.uri_from_bufnr(s.bufnr) }, sent['copilot/ask'][1].textDocument)

    press('q')
    -- `read("TOLLBOOTH_BURST", 10)` on line 15, from the r to the closing parenthesis.
    vim.api.nvim_win_set_cursor(0, { 15, 19 })
    press('v' .. '26l' .. '<Esc>')
    vim.cmd("'<,'>CopilotAsk why 10?")
    assert.are.equal('done', H.wait_ask().status)
    assert.are.same({
      start = { line = 14, character = 19 },
      ['end'] = { line = 14, character = 46 },
    }, sent['copilot/ask'][2].range)
    local line15 = vim.api.nvim_buf_get_lines(s.bufnr, 14, 15, false)[1]
    assert.are.equal('read("TOLLBOOTH_BURST", 10)', line15:sub(20, 46))
  end)

  it('prompts with vim.ui.input when the question is empty', function()
    local provider = H.fake_provider({ { text = 'Port 8080.' } })
    local s = H.session(provider)
    local sent = H.spy_requests(s.client)
    local original, prompt = vim.ui.input, nil
    finally(function()
      vim.ui.input = original
    end)
    vim.ui.input = function(opts, on_confirm)
      prompt = opts.prompt
      on_confirm('where is the port read?')
    end
    vim.cmd('CopilotAsk')
    assert.are.equal('done', H.wait_ask().status)
    assert.are.equal('Ask copilot-ls: ', prompt)
    assert.are.equal('where is the port read?', sent['copilot/ask'][1].question)
    -- Cancelling the prompt sends nothing.
    vim.ui.input = function(_, on_confirm)
      on_confirm(nil)
    end
    vim.cmd('CopilotAsk')
    assert.are.equal(1, #sent['copilot/ask'])
  end)

  it(':CopilotClear removes the diagnostics of the last answer', function()
    local s = H.session(H.fake_provider(RATE_LIMIT_STEPS))
    vim.cmd('CopilotAsk how are requests rate limited?')
    assert.are.equal('done', H.wait_ask().status)
    H.wait(H.timeout, function()
      return #copilot_diagnostics(s.bufnr, 'citation') > 0
    end, 'the citation diagnostics')
    vim.cmd('CopilotClear')
    H.wait(H.timeout, function()
      return #copilot_diagnostics(s.bufnr, 'citation') == 0
    end, 'the diagnostics to go')
    assert.are.equal(0, #H.notified(ERROR))
  end)

  it('roots the server at the git root, else at the cwd', function()
    local s = H.session(nil, { provider = 'none' })
    assert.are.equal(s.ws, s.client.root_dir)
    assert.are.same({ { name = s.ws, uri = vim.uri_from_fname(s.ws) } }, s.client.workspace_folders)
    H.cleanup()
    H.capture_notify()

    -- A project with a .git, and Neovim started elsewhere.
    local project = H.workspace()
    vim.fn.mkdir(project .. '/.git', 'p')
    require('copilot_ls').setup({ cmd = { H.server_bin }, provider = 'none' })
    vim.cmd.edit(vim.fn.fnameescape(project .. '/src/config.rs'))
    local client = H.wait_client(vim.api.nvim_get_current_buf())
    assert.are.equal(project, client.root_dir)
    assert.are_not.equal(project, vim.fn.getcwd())
    vim.cmd('CopilotAsk where is the port read?')
    local ask = H.wait_ask()
    assert.are.equal('done', ask.status, ask.error)
    assert.are.equal('no_provider', ask.result.stopReason)
    assert.are.equal(0, #H.notified(ERROR))
    -- v3: the ask's search saw the whole (small) workspace, so no "Indexing is …" line.
    assert.is_true(ask.result.index.complete, vim.inspect(ask.result.index))
    assert.are.equal(ask.result.index.filesTotal, ask.result.index.filesIndexed)
    -- The places are listed once, in the answer, not again under "Citations".
    local thread = table.concat(vim.api.nvim_buf_get_lines(require('copilot_ls.answer').bufnr, 0, -1, false), '\n')
    local first = ask.result.citations[1]
    local _, count = thread:gsub(vim.pesc(('%s:%d'):format(first.path, first.line)), '')
    assert.are.equal(1, count, thread)
    assert.is_nil(thread:find('## Citations', 1, true), thread)
    assert.is_nil(thread:find('Indexing is', 1, true), thread)
  end)

  it('attaches to buffers of every filetype, and never to the answer', function()
    local s = H.session(H.fake_provider({ { text = 'ok' } }))
    vim.fn.writefile({ 'no filetype here' }, s.ws .. '/data.unknownext')
    for _, file in ipairs({ 'README.md', 'docs/notes.md', 'Cargo.toml', 'data.unknownext' }) do
      vim.cmd.edit(file)
      local bufnr = vim.api.nvim_get_current_buf()
      local client = H.wait_client(bufnr)
      assert.are.equal(s.client.id, client.id, file)
    end
    assert.are.equal('', vim.bo.filetype)
    vim.cmd('CopilotAsk hello?')
    assert.are.equal('done', H.wait_ask().status)
    local answer = require('copilot_ls.answer')
    assert.are.same({}, vim.lsp.get_clients({ bufnr = answer.bufnr }))
    assert.are.equal(0, #H.notified(ERROR))
    assert.are.equal(0, #H.notified(INFO))
  end)

  it('stays off unnamed buffers and still answers from them', function()
    H.session(nil, { provider = 'none' })
    vim.cmd('enew')
    local scratch = vim.api.nvim_get_current_buf()
    -- setup() again re-runs vim.lsp.enable() over the open buffers, the unnamed one too.
    require('copilot_ls').setup({ provider = 'none' })
    vim.cmd('CopilotAsk where is the port read?')
    assert.are.equal('done', H.wait_ask().status)
    assert.are.same({}, vim.lsp.get_clients({ bufnr = scratch }))
    assert.are.equal(1, #vim.lsp.get_clients({ name = 'copilot_ls' }))
    assert.are.equal(0, #H.notified(ERROR))
  end)
end)
