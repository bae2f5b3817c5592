-- The thread buffer end to end, against the real copilot-ls and the scripted fake
-- provider: the answer streaming in (AskDelta on the partialResultToken), reasoning that
-- folds, follow-ups typed at the bottom, suggested edits as diffs accepted through the
-- server's code action, and citations that follow the server's republished diagnostics.
local H = require('helpers')

local ERROR = vim.log.levels.ERROR

local tool_call, answer_turn, thread_text, row_of, press =
  H.tool_call, H.answer_turn, H.thread_text, H.row_of, H.press
local copilot_diagnostics = H.diagnostics

local deliver = H.deliver

local BURST_EDIT = {
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
}

describe('the thread', function()
  before_each(function()
    H.load_plugin()
    H.capture_notify()
  end)
  after_each(H.cleanup)

  it('streams the answer in before the reply, folds the reasoning, then shows the reply', function()
    -- The server streams too, but only once the model replies: the provider waits long
    -- enough for this scripted feed to come first.
    local provider = H.fake_provider({
      answer_turn('The final answer: `RateLimiter::check` at src/rate_limit.rs:56.', {}, { delay_ms = 3000 }),
    })
    local s = H.session(provider)
    local sent = H.spy_requests(s.client)
    vim.cmd('CopilotAsk how are requests rate limited?')
    local ask = require('copilot_ls').last()
    local answer = require('copilot_ls.answer')
    H.wait(H.timeout, function()
      return ask.request_id and #provider.requests() >= 1
    end, 'the model call')
    local params = sent['copilot/ask'][1]
    assert.are.equal(ask.partial_token, params.partialResultToken)
    assert.are_not.equal(params.workDoneToken, params.partialResultToken)

    -- A draft question typed at the bottom survives the stream.
    local header = row_of('## Ask')
    vim.api.nvim_buf_set_lines(answer.bufnr, header, -1, false, { 'a draft' })

    deliver(s.client, ask.partial_token, { turn = 1, text = 'Let me search ' })
    deliver(s.client, ask.partial_token, { turn = 1, text = 'for the limiter.' })
    assert.matches('Let me search for the limiter.', thread_text(), 1, true)
    assert.are.equal('waiting', ask.status)
    -- The server's own index progress (PROTOCOL.md section 7, v3's definitions phase) is
    -- Neovim's to show (vim.lsp.status()), never a line of the thread.
    deliver(s.client, 'copilot-ls/indexing', { kind = 'begin', title = 'Indexing', message = '0/40 files' })
    deliver(s.client, 'copilot-ls/indexing', { kind = 'report', message = '20/40 files', percentage = 50 })
    deliver(s.client, 'copilot-ls/definitions', { kind = 'begin', title = 'Reading definitions' })
    assert.matches('Indexing', vim.lsp.status(), 1, true)
    deliver(s.client, 'copilot-ls/indexing', { kind = 'end' })
    deliver(s.client, 'copilot-ls/definitions', { kind = 'end' })
    assert.is_nil(thread_text():find('files', 1, true), thread_text())
    assert.is_nil(thread_text():find('definitions', 1, true), thread_text())
    assert.are.equal(0, #ask.progress)
    -- Not folded yet: it may still be the answer.
    local reasoning_row = row_of('Let me search for the limiter.')
    assert.are.equal(-1, vim.api.nvim_win_call(answer.winid, function()
      return vim.fn.foldclosed(reasoning_row)
    end))

    deliver(s.client, ask.partial_token, {
      turn = 1,
      step = { tool = 'search_code', arguments = { pattern = 'rate_limit' }, ok = true, summary = '12 matches', thought = 'Let me search for the limiter.' },
    })
    assert.matches('- search_code: rate_limit — 12 matches', thread_text(), 1, true)
    reasoning_row = row_of('Let me search for the limiter.')
    assert.are_not.equal(-1, vim.api.nvim_win_call(answer.winid, function()
      return vim.fn.foldclosed(reasoning_row)
    end), 'the reasoning turn folds once its tool call arrives')
    assert.matches('Reasoning: Let me search', vim.api.nvim_win_call(answer.winid, function()
      return vim.fn.foldtextresult(vim.fn.foldclosed(reasoning_row))
    end), 1, true)

    deliver(s.client, ask.partial_token, { turn = 2, text = 'The streamed ' })
    deliver(s.client, ask.partial_token, { turn = 2, text = 'answer.' })
    assert.matches('The streamed answer.', thread_text(), 1, true)
    assert.are.equal('waiting', ask.status)
    assert.are.equal(5, ask.deltas)
    for _, ms in ipairs(ask.delta_ms) do
      assert.is_true(ms < 100, ('a delta took %.1f ms to reach the buffer'):format(ms))
    end
    print(('\n  delta -> buffer: max %.2f ms over %d deltas'):format(math.max(unpack(ask.delta_ms)), #ask.delta_ms))

    -- The reply's answer replaces the streamed one; the reasoning stays, folded.
    assert.are.equal('done', H.wait_ask().status)
    local text = thread_text()
    assert.matches('The final answer: `RateLimiter::check`', text, 1, true)
    assert.is_nil(text:find('The streamed answer.', 1, true))
    assert.matches('Let me search for the limiter.', text, 1, true)
    assert.is_nil(text:find('Waiting', 1, true))
    assert.are.equal('a draft', vim.api.nvim_buf_get_lines(answer.bufnr, -2, -1, false)[1])
    -- A delta after the reply changes nothing.
    deliver(s.client, ask.partial_token, { turn = 3, text = 'late' })
    assert.is_nil(thread_text():find('late', 1, true))
    -- None of it went into vim.lsp.status().
    assert.is_nil(vim.lsp.status():find('streamed', 1, true))
    assert.are.equal(0, #H.notified(ERROR))
  end)

  it('streams from the real server as the fake provider writes slowly', function()
    local answer_text = 'Requests go through RateLimiter::check, which refills the bucket (src/rate_limit.rs:56).'
    local provider = H.fake_provider({
      {
        text = 'Let me look for the limiter.',
        tool_calls = { tool_call('call_1', 'search_code', { pattern = 'rate_limit' }) },
        chunk_delay_ms = 30,
      },
      answer_turn(answer_text, {}, { chunk_delay_ms = 100 }),
    })
    local s = H.session(provider, { stream = true })
    -- When each `$/progress` on a partial token reaches the client (its RPC layer decodes
    -- it as it reads; the handler runs after a vim.schedule).
    local arrivals, decode = {}, vim.json.decode
    finally(function()
      vim.json.decode = decode
    end)
    vim.json.decode = function(text, ...)
      if type(text) == 'string' and text:find('"$/progress"', 1, true) and text:find('nvim-partial-', 1, true) then
        table.insert(arrivals, vim.uv.hrtime())
      end
      return decode(text, ...)
    end
    vim.cmd('CopilotAsk how are requests rate limited?')
    local ask = require('copilot_ls').last()
    local answer = require('copilot_ls.answer')

    -- The reasoning streams in, then folds once its tool call arrives.
    H.wait(H.timeout, function()
      return thread_text():find('Let me look for the limiter.', 1, true)
    end, 'the reasoning text')
    -- The answer grows from the answer tool's arguments while the ask is still running.
    local partial
    H.wait(H.timeout, function()
      local text = thread_text()
      if ask.status == 'waiting' and text:find('Requests go', 1, true) then
        partial = text
      end
      return partial or ask.status ~= 'waiting'
    end, 'part of the answer before the reply')
    assert.is_truthy(partial, 'the answer only came with the reply')
    assert.is_nil(partial:find(answer_text, 1, true), 'the whole answer was there at once')
    local row = row_of('Let me look for the limiter.')
    assert.are_not.equal(-1, vim.api.nvim_win_call(answer.winid, function()
      return vim.fn.foldclosed(row)
    end), 'the reasoning is folded once its tool call arrived')

    assert.are.equal('done', H.wait_ask().status)
    assert.matches(answer_text, thread_text(), 1, true)
    -- What it cost, from the reply's usage.
    assert.are.equal(2, ask.result.usage.modelCalls)
    assert.matches(require('copilot_ls.render').usage_line(ask.result.usage), thread_text(), 1, true)
    assert.matches('_2 model calls · ', thread_text(), 1, true)
    assert.are.equal(1, select(2, thread_text():gsub('Requests go through', '')))
    assert.matches('- search_code: rate_limit', thread_text(), 1, true)
    assert.is_true(ask.deltas >= 10, tostring(ask.deltas))
    assert.are.equal(ask.deltas, #ask.delta_at)

    -- From arrival in the client to the buffer holding the delta.
    local latencies = {}
    for i = 1, math.min(#arrivals, #ask.delta_at) do
      table.insert(latencies, (ask.delta_at[i] - arrivals[i]) / 1e6)
    end
    table.sort(latencies)
    print(('\n  real server, %d deltas: arrival -> buffer median %.2f ms, max %.2f ms'):format(
      #latencies, latencies[math.ceil(#latencies / 2)], latencies[#latencies]))
    assert.is_true(#latencies >= 10)
    assert.is_true(latencies[#latencies] < 100, ('slowest: %.1f ms'):format(latencies[#latencies]))
    assert.are.equal(0, #H.notified(ERROR))
  end)

  it('puts each streamed token in the buffer within 100 ms of the provider writing it', function()
    -- The provider is in this process, so its writes and the buffer share one clock.
    local pieces = {}
    for i = 1, 12 do
      table.insert(pieces, ('word%02d '):format(i))
    end
    local stub = H.sse_stub(pieces, 60)
    local s = H.session({ url = stub.url }, { stream = true })
    vim.cmd('CopilotAsk how are requests rate limited?')
    local ask = require('copilot_ls').last()
    -- When the buffer first holds each piece.
    local shown = {}
    local render = require('copilot_ls.answer').render
    finally(function()
      require('copilot_ls.answer').render = render
    end)
    require('copilot_ls.answer').render = function(...)
      render(...)
      local now, text = vim.uv.hrtime(), thread_text()
      for i, piece in ipairs(pieces) do
        if not shown[i] and text:find(piece, 1, true) then
          shown[i] = now
        end
      end
    end
    local done = H.wait_ask()
    assert.are.equal('done', done.status, done.error)
    assert.are.equal(1, stub.requests)
    assert.matches('word01 word02', thread_text(), 1, true)
    local latencies = {}
    for i = 1, #pieces do
      assert(stub.written[i] and shown[i], ('piece %d was never shown on its own'):format(i))
      table.insert(latencies, (shown[i] - stub.written[i]) / 1e6)
    end
    -- Shown while streaming, not only with the reply.
    assert.is_true(shown[1] < shown[#pieces])
    print(('\n  provider write -> buffer, %d tokens through the real server: first %.1f ms, max %.1f ms'):format(
      #latencies, latencies[1], math.max(unpack(latencies))))
    for i, ms in ipairs(latencies) do
      assert.is_true(ms < 100, ('piece %d took %.1f ms'):format(i, ms))
    end
    assert.is_truthy(s.client)
    assert.are.equal(0, #H.notified(ERROR))
  end)

  it('keeps each delta under 100 ms to the buffer in a long thread with an edit', function()
    local steps = vim.deepcopy(BURST_EDIT)
    table.insert(steps, { text = 'The final reply.', delay_ms = 4000 })
    local provider = H.fake_provider(steps)
    local s = H.session(provider, nil, 'src/config.rs')
    vim.cmd('CopilotAsk how do I allow bigger bursts?')
    assert.are.equal('done', H.wait_ask().status)
    vim.cmd('CopilotFollowUp and what else?')
    local ask = require('copilot_ls').last()
    H.wait(H.timeout, function()
      return ask.request_id and #provider.requests() >= 3
    end, 'the follow-up to reach the model')
    local sentence = 'A token or two of **markdown**, with `code` and src/config.rs:15. '
    for i = 1, 300 do
      deliver(s.client, ask.partial_token, { turn = 1, text = sentence .. (i % 10 == 0 and '\n\n' or '') })
    end
    assert.are.equal('waiting', ask.status)
    -- Conceal is off while the answer streams (see answer.lua).
    assert.are.equal(0, vim.wo[require('copilot_ls.answer').winid].conceallevel)
    local text = thread_text()
    assert.matches('```diff', text, 1, true)
    assert.matches('+            burst: read("TOLLBOOTH_BURST", 20)', text, 1, true)
    assert.are.equal(300, select(2, text:gsub('A token or two', '')))
    local sorted = vim.deepcopy(ask.delta_ms)
    table.sort(sorted)
    local median, p95, max = sorted[150], sorted[285], sorted[300]
    print(('\n  300 deltas into a %d-line thread: median %.2f ms, p95 %.2f ms, max %.2f ms'):format(
      vim.api.nvim_buf_line_count(require('copilot_ls.answer').bufnr), median, p95, max))
    assert.is_true(max < 100, ('slowest delta: %.1f ms'):format(max))
    assert.are.equal('done', H.wait_ask().status)
    assert.matches('The final reply.', thread_text(), 1, true)
    -- Done: conceal is back on, and typing the next question stays cheap.
    local answer = require('copilot_ls.answer')
    assert.are.equal(2, vim.wo[answer.winid].conceallevel)
    local last = vim.api.nvim_buf_line_count(answer.bufnr)
    local started = vim.uv.hrtime()
    for i = 1, 100 do
      vim.api.nvim_buf_set_text(answer.bufnr, last - 1, i - 1, last - 1, i - 1, { 'x' })
    end
    local per_key = (vim.uv.hrtime() - started) / 1e8
    print(('  typing at the prompt: %.3f ms per key'):format(per_key))
    assert.is_true(per_key < 20, per_key)
  end)

  it('highlights with tree-sitter and conceals, when the markdown parser is there', function()
    local s = H.session(H.fake_provider({ { text = 'Port **8080**.' } }))
    vim.cmd('CopilotAsk where is the port read?')
    assert.are.equal('done', H.wait_ask().status)
    local answer = require('copilot_ls.answer')
    assert.are.equal('markdown', vim.bo[answer.bufnr].filetype)
    local has_parser = pcall(vim.treesitter.language.add, 'markdown')
    assert.are.equal(has_parser, answer.treesitter)
    if has_parser then
      assert.is_truthy(vim.treesitter.highlighter.active[answer.bufnr])
    end
    assert.are.equal(2, vim.wo[answer.winid].conceallevel)
    assert.are.same({}, vim.lsp.get_clients({ bufnr = answer.bufnr }))
    assert.is_truthy(s.client)
  end)

  it('sends follow-ups typed at the bottom, keeping the thread and the conversation', function()
    local provider = H.fake_provider({
      { text = 'The burst is 10 by default (src/config.rs:15).' },
      { text = 'It comes from TOLLBOOTH_BURST.' },
      { text = 'Ten requests.' },
      { text = 'Something else.' },
    })
    local s = H.session(provider)
    local sent = H.spy_requests(s.client)
    vim.cmd('CopilotAsk what is the default burst?')
    assert.are.equal('done', H.wait_ask().status)
    local answer = require('copilot_ls.answer')
    assert.are.equal(answer.winid, vim.api.nvim_get_current_win())

    -- <CR> in normal mode on the prompt sends it.
    local header = row_of('## Ask')
    assert.are.equal(header + 1, vim.api.nvim_win_get_cursor(0)[1], 'the cursor waits at the prompt')
    vim.api.nvim_buf_set_lines(answer.bufnr, header, -1, false, { 'where does it come from?' })
    vim.api.nvim_win_set_cursor(0, { header + 1, 0 })
    press('<CR>')
    assert.are.equal('done', H.wait_ask().status)
    -- :CopilotSend does the same.
    header = row_of('## Ask')
    vim.api.nvim_buf_set_lines(answer.bufnr, header, -1, false, { 'how many is that?' })
    vim.cmd('CopilotSend')
    assert.are.equal('done', H.wait_ask().status)

    local text = thread_text()
    for _, part in ipairs({
      '> what is the default burst?',
      'The burst is 10 by default',
      '> where does it come from?',
      'It comes from TOLLBOOTH_BURST.',
      '> how many is that?',
      'Ten requests.',
    }) do
      assert.matches(part, text, 1, true)
    end
    assert.is_true(text:find('default burst?', 1, true) < text:find('come from?', 1, true))
    -- The prompt is empty again.
    assert.are.equal('', vim.trim(table.concat(vim.api.nvim_buf_get_lines(answer.bufnr, row_of('## Ask'), -1, false), '')))
    local asks = sent['copilot/ask']
    assert.are.equal(3, #asks)
    assert.are.equal(asks[1].conversationId, asks[2].conversationId)
    assert.are.equal(asks[1].conversationId, asks[3].conversationId)
    -- Follow-ups are about the document asked from, not the thread buffer.
    assert.are.same({ uri = vim.uri_from_bufnr(s.bufnr) }, asks[2].textDocument)
    local body = vim.json.encode(provider.requests()[3].body.messages)
    assert.matches('where does it come from?', body, 1, true)

    -- <CR> on a citation of an earlier answer still jumps.
    vim.cmd('CopilotAnswer')
    vim.api.nvim_win_set_cursor(0, { row_of('src/config.rs:15'), 0 })
    press('<CR>')
    assert.are.equal(s.ws .. '/src/config.rs', vim.api.nvim_buf_get_name(0))
    assert.are.equal(15, vim.api.nvim_win_get_cursor(0)[1])

    -- An empty prompt sends nothing.
    vim.cmd('CopilotAnswer')
    vim.cmd('CopilotSend')
    assert.are.equal(3, #sent['copilot/ask'])
    assert.matches('type a question', H.notified(vim.log.levels.WARN)[1].msg, 1, true)
    -- A new :CopilotAsk starts a new thread.
    vim.cmd('CopilotAsk something else')
    assert.are.equal('done', H.wait_ask().status)
    assert.is_nil(thread_text():find('default burst', 1, true))
    assert.are.equal(0, #H.notified(ERROR))
  end)

  it('shows a suggested edit as a diff and applies it with ga through the code action', function()
    local s = H.session(H.fake_provider(BURST_EDIT), nil, 'src/config.rs')
    local sent = H.spy_requests(s.client)
    vim.cmd('CopilotAsk how do I allow bigger bursts?')
    assert.are.equal('done', H.wait_ask().status)
    H.wait(H.timeout, function()
      return #copilot_diagnostics(s.bufnr, 'suggested-edit') > 0
    end, 'the suggested-edit diagnostic')
    local text = thread_text()
    assert.matches('- Raise the default burst — src/config.rs:15', text, 1, true)
    assert.matches('  ```diff', text, 1, true)
    assert.matches('\n  %-[^\n]*read%("TOLLBOOTH_BURST", 10%)', text)
    assert.matches('\n  %+[^\n]*read%("TOLLBOOTH_BURST", 20%)', text)
    assert.matches('ga accepts it', text, 1, true)

    -- ga on a line of the diff.
    vim.api.nvim_win_set_cursor(0, { row_of('TOLLBOOTH_BURST", 20'), 0 })
    press('ga')
    H.wait(H.timeout, function()
      return vim.api.nvim_buf_get_lines(s.bufnr, 14, 15, false)[1]:find('read("TOLLBOOTH_BURST", 20)', 1, true)
    end, 'the edit to apply')
    assert.are.equal(1, #sent['textDocument/codeAction'])
    assert.are.equal(vim.uri_from_bufnr(s.bufnr), sent['textDocument/codeAction'][1].textDocument.uri)
    H.wait(H.timeout, function()
      return thread_text():find('_applied_', 1, true)
    end, 'the thread to say applied')
    text = thread_text()
    assert.is_nil(text:find('```diff', 1, true))
    assert.is_nil(text:find('ga accepts', 1, true))
    assert.is_true(vim.bo[s.bufnr].modified)
    assert.matches('TOLLBOOTH_BURST", 10', table.concat(vim.fn.readfile(s.ws .. '/src/config.rs'), '\n'), 1, true)
    -- ga again: nothing more to apply.
    vim.api.nvim_win_set_cursor(0, { row_of('Raise the default burst —'), 0 })
    press('ga')
    assert.are.equal(1, #sent['textDocument/codeAction'])
    assert.are.equal(0, #H.notified(ERROR))
  end)

  it('applies with ga an edit to a file that is not open yet', function()
    local s = H.session(H.fake_provider(BURST_EDIT), nil, 'src/main.rs')
    vim.cmd('CopilotAsk how do I allow bigger bursts?')
    assert.are.equal('done', H.wait_ask().status)
    local config_rs = s.ws .. '/src/config.rs'
    local unloaded = vim.fn.bufnr(config_rs)
    assert.is_true(unloaded == -1 or not vim.api.nvim_buf_is_loaded(unloaded))
    -- The diff comes from the file on disk.
    assert.matches('\n  %+[^\n]*read%("TOLLBOOTH_BURST", 20%)', thread_text())
    vim.api.nvim_win_set_cursor(0, { row_of('Raise the default burst —'), 0 })
    press('ga')
    H.wait(H.timeout, function()
      return thread_text():find('_applied_', 1, true) or #H.notified(vim.log.levels.WARN) > 0
    end, 'the edit to be applied')
    assert.are.equal(0, #H.notified(vim.log.levels.WARN), vim.inspect(H.notifications))
    local buf = vim.fn.bufnr(config_rs)
    assert.matches('read("TOLLBOOTH_BURST", 20)', vim.api.nvim_buf_get_lines(buf, 14, 15, false)[1], 1, true)
    assert.is_true(vim.bo[buf].modified)
    assert.is_true(vim.lsp.buf_is_attached(buf, s.client.id))
    assert.matches('TOLLBOOTH_BURST", 10', table.concat(vim.fn.readfile(config_rs), '\n'), 1, true)
    assert.are.equal(0, #H.notified(ERROR))
  end)

  it('rejects a suggested edit with gr, and after an applied edit is undone offers none', function()
    local provider = H.fake_provider(vim.list_extend(vim.deepcopy(BURST_EDIT), vim.deepcopy(BURST_EDIT)))
    local s = H.session(provider, nil, 'src/config.rs')
    vim.cmd('CopilotAsk how do I allow bigger bursts?')
    assert.are.equal('done', H.wait_ask().status)
    vim.api.nvim_win_set_cursor(0, { row_of('Raise the default burst —'), 0 })
    press('gr')
    assert.matches('- Raise the default burst — src/config.rs:15 — _rejected_', thread_text(), 1, true)
    assert.is_nil(thread_text():find('ga accepts', 1, true))
    assert.matches('TOLLBOOTH_BURST", 10', vim.api.nvim_buf_get_lines(s.bufnr, 14, 15, false)[1], 1, true)

    -- Applied elsewhere (the lightbulb), then undone: the server offers it no more, and
    -- the thread does not claim otherwise.
    vim.cmd('CopilotAsk how do I allow bigger bursts?')
    assert.are.equal('done', H.wait_ask().status)
    H.wait(H.timeout, function()
      return #copilot_diagnostics(s.bufnr, 'suggested-edit') > 0
    end, 'the suggested-edit diagnostic')
    assert.matches('ga accepts it', thread_text(), 1, true)
    require('copilot_ls.answer').close()
    vim.api.nvim_set_current_buf(s.bufnr)
    vim.api.nvim_win_set_cursor(0, { 15, 20 })
    vim.lsp.buf.code_action({
      apply = true,
      filter = function(a)
        return a.title == 'Copilot: Raise the default burst'
      end,
    })
    H.wait(H.timeout, function()
      return vim.api.nvim_buf_get_lines(s.bufnr, 14, 15, false)[1]:find('20)', 1, true)
    end, 'the edit to apply')
    vim.cmd('silent undo')
    assert.matches('TOLLBOOTH_BURST", 10', vim.api.nvim_buf_get_lines(s.bufnr, 14, 15, false)[1], 1, true)
    -- Whatever the server decides about an undone edit, the thread says the same: the
    -- hint to accept it stands exactly when the server offers its code action.
    local function offered()
      local params = vim.lsp.util.make_range_params(0, s.client.offset_encoding)
      params.context = { diagnostics = {}, triggerKind = 1 }
      local reply = s.client:request_sync('textDocument/codeAction', params, H.timeout, s.bufnr)
      return vim.iter(reply.result or {}):find(function(a)
        return a.title == 'Copilot: Raise the default burst'
      end) ~= nil
    end
    local function hinted()
      return thread_text():find('ga accepts', 1, true) ~= nil
    end
    H.wait(H.timeout, function()
      return offered() == hinted()
    end, 'the thread to agree with the server about the undone edit')
    assert.is_nil(thread_text():find('code_action()', 1, true))

    -- Its text changed: the server withdraws it, and the thread no longer offers it.
    vim.api.nvim_buf_set_lines(s.bufnr, 14, 15, false, { '            burst: 30,' })
    H.wait(H.timeout, function()
      return #copilot_diagnostics(s.bufnr, 'suggested-edit') == 0
    end, 'the server to withdraw the edit')
    assert.is_false(offered())
    H.wait(H.timeout, function()
      return thread_text():find('no longer offered', 1, true)
    end, 'the thread to say the edit is no longer offered')
    assert.is_false(hinted())
  end)

  it('moves citations in the thread and the quickfix list to the republished lines', function()
    local s = H.session(H.fake_provider({
      answer_turn('See `RateLimiter::check`.', {
        { path = 'src/rate_limit.rs', line = 56, end_line = 61, note = 'check admits or refuses' },
      }),
    }))
    vim.cmd('CopilotAsk how are requests rate limited?')
    assert.are.equal('done', H.wait_ask().status)
    H.wait(H.timeout, function()
      return #copilot_diagnostics(s.bufnr, 'citation') > 0
    end, 'the citation diagnostics')
    assert.are.equal(56, vim.fn.getqflist()[1].lnum)

    -- Two lines inserted above the cited code; the server republishes the citation there.
    vim.api.nvim_buf_set_lines(s.bufnr, 0, 0, false, { '// one', '// two' })
    H.wait(H.timeout, function()
      local d = copilot_diagnostics(s.bufnr, 'citation')[1]
      return d and d.lnum == 57
    end, 'the citation diagnostic on its new line')
    H.wait(H.timeout, function()
      return vim.fn.getqflist()[1].lnum == 58
    end, 'the quickfix item to move')
    assert.are.equal(63, vim.fn.getqflist()[1].end_lnum)
    assert.are.equal('copilot-ls: how are requests rate limited?', vim.fn.getqflist({ title = 1 }).title)
    H.wait(H.timeout, function()
      return thread_text():find('- src/rate_limit.rs:58-63 — check admits or refuses', 1, true)
    end, 'the thread to show the new lines')
    vim.cmd('CopilotAnswer')
    vim.api.nvim_win_set_cursor(0, { row_of('src/rate_limit.rs:58-63'), 0 })
    press('<CR>')
    assert.are.equal(s.bufnr, vim.api.nvim_get_current_buf())
    assert.are.equal(58, vim.api.nvim_win_get_cursor(0)[1])
    assert.matches('pub fn check', vim.api.nvim_get_current_line(), 1, true)
  end)

  it('follows diagnostics moved by the server even without a document change', function()
    -- The client's side alone: the positions come from whatever the server publishes.
    local s = H.session(H.fake_provider({
      answer_turn('Two places.', {
        { path = 'src/rate_limit.rs', line = 56, end_line = 61, note = 'check' },
        { path = 'src/rate_limit.rs', line = 10, note = 'the struct' },
      }),
    }))
    vim.cmd('CopilotAsk where?')
    assert.are.equal('done', H.wait_ask().status)
    H.wait(H.timeout, function()
      return #copilot_diagnostics(s.bufnr, 'citation') == 2
    end, 'the citation diagnostics')
    local ns = vim.lsp.diagnostic.get_namespace(s.client.id, false)
    local moved = vim.deepcopy(vim.diagnostic.get(s.bufnr, { namespace = ns }))
    for _, d in ipairs(moved) do
      if d.code == 'citation' and d.message == 'check' then
        -- As the server republishes it: the first line, and the lines in `data`.
        d.lnum, d.end_lnum = 69, 69
        local data = d.user_data and d.user_data.lsp and d.user_data.lsp.data
        if type(data) == 'table' and data.line then
          assert.are.equal(0, data.citation)
          data.line, data.endLine = 70, 75
        end
      end
    end
    vim.diagnostic.set(ns, s.bufnr, moved)
    H.wait(H.timeout, function()
      return thread_text():find('- src/rate_limit.rs:70-75 — check', 1, true)
    end, 'the thread to follow the diagnostic')
    assert.matches('- src/rate_limit.rs:10 — the struct', thread_text(), 1, true)
    H.wait(H.timeout, function()
      return vim.fn.getqflist()[1].lnum == 70
    end, 'the quickfix list to follow')
    assert.are.equal(10, vim.fn.getqflist()[2].lnum)
    -- Its diagnostic gone: the citation keeps its last line and says the text is gone.
    vim.diagnostic.set(ns, s.bufnr, vim.tbl_filter(function(d)
      return d.message ~= 'check'
    end, moved))
    H.wait(H.timeout, function()
      return thread_text():find('- src/rate_limit.rs:70-75 — check (the cited text is gone)', 1, true)
    end, 'the thread to say the text is gone')
  end)
end)
