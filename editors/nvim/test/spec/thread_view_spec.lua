-- What the thread window shows, end to end against the real copilot-ls and the scripted
-- fake provider: a new question asked from inside a long thread, a new answer opening at
-- its top, :CopilotClear, the lines that say what an ask is doing or waits for or why it
-- stopped, `path:line` mentions in an answer that follow the cited text, and the thread's
-- window options staying out of other buffers and windows. Each flow leaves a screen dump
-- (H.screen).
local H = require('helpers')

local ERROR, WARN = vim.log.levels.ERROR, vim.log.levels.WARN

--- The thread window's view: its first and last lines on screen, the buffer's last line,
--- and whether rows below the text stand empty (`~`) while lines above are hidden.
local function view()
  local answer = require('copilot_ls.answer')
  return vim.api.nvim_win_call(answer.winid, function()
    local top = vim.fn.line('w0')
    local used = vim.api.nvim_win_text_height(answer.winid, { start_row = top - 1 }).all
    return {
      top = top,
      bottom = vim.fn.line('w$'),
      last = vim.fn.line('$'),
      wasted = top > 1 and used < vim.api.nvim_win_get_height(answer.winid),
    }
  end)
end

-- src/redirects.py for the no-model places: the definition that answers "How are
-- redirects limited?" is on line 20; lines 1-15 are a docstring, imports and a guard.
local REDIRECTS_PY = table.concat({
  '"""',
  'tollbooth.redirects',
  '~~~~~~~~~~~~~~~~~~~',
  '',
  "How the gateway follows an upstream's redirects, up to a limit, and how often",
  'a failed upstream connection is retried.',
  '"""',
  'import os',
  'import time',
  'from typing import TYPE_CHECKING',
  '',
  'from .errors import TooManyRedirects',
  '',
  'if TYPE_CHECKING:',
  '    from .upstream import Response',
  '',
  'DEFAULT_RETRIES = 3',
  '',
  '',
  'def follow_redirects(response, send, max_redirects=30):',
  '    """Follows an upstream\'s redirects; raises past the limit."""',
  '    history = []',
  '    while response.is_redirect:',
  '        history.append(response)',
  '        if len(history) >= max_redirects:',
  '            raise TooManyRedirects(max_redirects)',
  '        response = send(response.headers["location"])',
  '    return response',
}, '\n')

local function long_answer()
  local lines = {}
  for i = 1, 80 do
    table.insert(lines, ('Paragraph %d of a long answer about the limiter.'):format(i))
  end
  return table.concat(lines, '\n\n')
end

local deliver = H.deliver

describe('the thread window', function()
  before_each(function()
    H.load_plugin()
    H.capture_notify()
  end)
  after_each(H.cleanup)

  for _, layout in ipairs({ 'float', 'split' }) do
    it(('shows the new thread when asked again from inside a long one (%s)'):format(layout), function()
      local provider = H.fake_provider({
        { text = long_answer() },
        { text = 'Short second answer.', delay_ms = 1500 },
        { text = long_answer() },
        { text = 'A follow-up answer.', delay_ms = 1000 },
      })
      local s = H.session(provider, { answer = { layout = layout } })
      vim.cmd('CopilotAsk the first question?')
      assert.are.equal('done', H.wait_ask().status)
      local answer = require('copilot_ls.answer')
      -- The long answer opens at its top; the user reads down to the prompt below it and
      -- asks from there.
      assert.are.equal(answer.winid, vim.api.nvim_get_current_win())
      assert.are.equal(1, view().top, vim.inspect(view()))
      vim.cmd('normal! G')
      assert.is_true(view().top > 100, vim.inspect(view()))

      vim.cmd('CopilotAsk the second question?')
      local ask = require('copilot_ls').last()
      assert.are.equal('waiting', ask.status)
      local during = view()
      assert.are.equal(1, during.top, 'the short new thread shows from its start: ' .. vim.inspect(during))
      assert.is_false(during.wasted)
      local screen = table.concat(H.screen('reask-' .. layout .. '-waiting'), '\n')
      assert.matches('> the second question?', screen, 1, true)

      assert.are.equal('done', H.wait_ask().status)
      local after = view()
      assert.are.equal(1, after.top, vim.inspect(after))
      screen = table.concat(H.screen('reask-' .. layout .. '-answered'), '\n')
      assert.matches('Short second answer.', screen, 1, true)
      assert.matches('## Ask', screen, 1, true)

      -- A follow-up to a long thread keeps the window full, ending at the prompt.
      vim.cmd('CopilotAsk the first question again?')
      assert.are.equal('done', H.wait_ask().status)
      vim.cmd('CopilotFollowUp and then?')
      local follow = view()
      assert.is_false(follow.wasted, vim.inspect(follow))
      assert.are.equal(follow.last, follow.bottom)
      H.wait_ask()
      assert.is_false(view().wasted, vim.inspect(view()))
      H.screen('reask-' .. layout .. '-follow-up')
      assert.is_truthy(s.client)
      H.assert_no_errors()
    end)
  end

  it(':CopilotClear empties the thread; the next question starts a new conversation', function()
    local provider = H.fake_provider({ { text = 'First answer.' }, { text = 'Second answer.' } })
    local s = H.session(provider)
    local sent = H.spy_requests(s.client)
    vim.cmd('CopilotAsk the first question?')
    assert.are.equal('done', H.wait_ask().status)
    vim.cmd('CopilotClear')
    local text = H.thread_text()
    assert.is_nil(text:find('First answer.', 1, true), text)
    assert.is_nil(text:find('the first question', 1, true), text)
    assert.matches('Cleared', text, 1, true)
    local screen = table.concat(H.screen('cleared'), '\n')
    assert.matches('Cleared', screen, 1, true)
    assert.is_nil(screen:find('First answer.', 1, true), screen)

    -- Typed at the bottom of the emptied thread: a new conversation, shown alone.
    local answer = require('copilot_ls.answer')
    vim.api.nvim_buf_set_lines(answer.bufnr, H.row_of('## Ask'), -1, false, { 'the second question?' })
    vim.cmd('CopilotSend')
    assert.are.equal('done', H.wait_ask().status)
    text = H.thread_text()
    assert.matches('> the second question?', text, 1, true)
    assert.matches('Second answer.', text, 1, true)
    assert.is_nil(text:find('First answer.', 1, true), text)
    assert.is_nil(text:find('Cleared', 1, true), text)
    local asks = sent['copilot/ask']
    assert.are_not.equal(asks[1].conversationId, asks[2].conversationId)
    local body = vim.json.encode(provider.requests()[2].body.messages)
    assert.is_nil(body:find('the first question', 1, true), 'the model got no history')
    -- Asked from the thread, the question is still about the document asked from first.
    assert.are.same({ uri = vim.uri_from_bufnr(s.bufnr) }, asks[2].textDocument)
    H.screen('cleared-then-asked')
    H.assert_no_errors()
  end)

  it('says what the ask is doing without repeating itself, and why it stopped', function()
    local provider = H.fake_provider({
      {
        tool_calls = {
          H.tool_call('c1', 'read_file', { path = 'src/rate_limit.rs', start_line = 1, end_line = 20 }),
          H.tool_call('c2', 'find_symbol', { name = 'RateLimiter' }),
        },
      },
      H.answer_turn('The limiter is `RateLimiter`.', {}, { delay_ms = 3000 }),
    })
    local s = H.session(provider)
    vim.cmd('CopilotAsk how are requests rate limited?')
    local ask = require('copilot_ls').last()
    assert.matches('_Waiting for copilot-ls…_', H.thread_text(), 1, true)
    H.wait(H.timeout, function()
      return ask.request_id and #provider.requests() >= 2
    end, 'the second model call')
    -- Text streaming in says the ask is under way: no "Waiting" line under it.
    deliver(s.client, ask.partial_token, { turn = 2, text = 'The limiter is' })
    local text = H.thread_text()
    assert.matches('The limiter is', text, 1, true)
    assert.is_nil(text:find('Waiting for copilot-ls', 1, true), text)
    H.screen('streaming-without-waiting')
    assert.are.equal('done', H.wait_ask().status)
    text = H.thread_text()
    assert.matches('\n- read_file: src/rate_limit.rs:1-20\n', text, 1, true)
    assert.matches('\n- find_symbol: RateLimiter — %d+ definitions?\n', text)
    assert.is_nil(text:find('RateLimiter — RateLimiter', 1, true), text)
    H.assert_no_errors()
  end)

  it("names a tool call's file and lines once, whatever the server's summary restates", function()
    local provider = H.fake_provider({
      {
        tool_calls = {
          H.tool_call('c1', 'propose_edit', {
            path = 'src/config.rs',
            old_text = 'read("TOLLBOOTH_BURST", 10)',
            new_text = 'read("TOLLBOOTH_BURST", 20)',
            title = 'Raise the default burst',
          }),
          H.tool_call('c2', 'read_file', { path = 'src/config.rs' }),
        },
      },
      H.answer_turn('Raise the default burst to 20.', { { path = 'src/config.rs', line = 15 } }),
    })
    H.session(provider)
    vim.cmd('CopilotAsk how do I raise the burst?')
    local ask = H.wait_ask()
    assert.are.equal('done', ask.status)
    local steps = ask.result.steps
    -- The server's summaries restate the path with the lines: `edit src/config.rs:15-15`.
    assert.matches('src/config.rs:15', steps[1].summary, 1, true)
    local text = H.thread_text()
    assert.matches('\n- propose_edit: src/config.rs:15\n', text, 1, true)
    assert.matches('\n- read_file: src/config.rs:1%-%d+\n', text)
    for line in text:gmatch('[^\n]+') do
      if line:match('^%- [%w_]+: ') then
        local _, count = line:gsub('src/config%.rs', '')
        assert.are.equal(1, count, 'said twice: ' .. line)
      end
    end
    H.screen('tool-calls-said-once')
    H.assert_no_errors()
  end)

  it('says what it waits for: copilot-ls until the server begins, then the model or a tool', function()
    local provider = H.fake_provider({
      { tool_calls = { H.tool_call('c1', 'search_code', { pattern = 'rate_limit' }) } },
      H.answer_turn('The limiter is `RateLimiter`.', {}, { delay_ms = 3000 }),
    })
    local s = H.session(provider)
    vim.cmd('CopilotAsk how are requests rate limited?')
    local ask = require('copilot_ls').last()
    -- Before the server took the question up (its progress `begin`).
    assert.matches('_Waiting for copilot-ls…_', H.thread_text(), 1, true)
    -- The tool call is over and the model is asked again (it answers in 3 s).
    H.wait(H.timeout, function()
      return #provider.requests() >= 2 and #ask.turns > 0 and #ask.turns[1].steps > 0
    end, 'the second model call')
    H.wait(H.timeout, function()
      return H.thread_text():find('_Waiting for the model…_', 1, true)
    end, 'the thread to say it waits for the model')
    assert.is_nil(H.thread_text():find('Waiting for copilot-ls', 1, true), H.thread_text())
    H.screen('waiting-for-the-model')
    -- A tool call starting (its progress report), then its step: copilot-ls runs it, then
    -- the model is asked again.
    H.deliver(s.client, ask.token, { kind = 'report', message = 'find_symbol: RateLimiter' })
    assert.matches('\n- find_symbol: RateLimiter\n_Running find_symbol…_', H.thread_text(), 1, true)
    H.deliver(s.client, ask.partial_token, {
      turn = 2,
      step = { tool = 'find_symbol', arguments = { name = 'RateLimiter' }, ok = true, summary = '1 definition' },
    })
    assert.matches('_Waiting for the model…_', H.thread_text(), 1, true)
    assert.are.equal('done', H.wait_ask().status)
    assert.is_nil(H.thread_text():find('Waiting', 1, true), H.thread_text())
    H.assert_no_errors()
  end)

  it('opens a new answer at its top, the prompt a G away', function()
    -- A no-model answer, as in the issue: its first lines (the note that no model is
    -- configured, the first place) are what matters, the prompt is below.
    H.session(nil, { provider = 'none' })
    vim.cmd('CopilotAsk How are requests rate limited?')
    assert.are.equal('no_provider', H.wait_ask().result.stopReason)
    local answer = require('copilot_ls.answer')
    local height = vim.api.nvim_win_get_height(answer.winid)
    assert.is_true(vim.api.nvim_win_text_height(answer.winid, {}).all > height, 'the answer fits')
    local shown = view()
    assert.are.equal(1, shown.top, vim.inspect(shown))
    assert.are.equal(1, vim.api.nvim_win_get_cursor(answer.winid)[1])
    local screen = table.concat(H.screen('new-answer-at-its-top'), '\n')
    assert.matches('> How are requests rate limited?', screen, 1, true)
    assert.matches('No model is configured', screen, 1, true)
    -- The prompt is where it always is: G reaches it, and the question typed there goes.
    vim.cmd('normal! G')
    assert.are.equal(H.row_of('## Ask') + 1, vim.api.nvim_win_get_cursor(answer.winid)[1])

    -- A follow-up's answer opens at its question too.
    vim.api.nvim_buf_set_lines(answer.bufnr, H.row_of('## Ask'), -1, false, { 'and the burst?' })
    vim.cmd('CopilotSend')
    assert.are.equal('done', H.wait_ask().status)
    shown = view()
    assert.are.equal(H.row_of('> and the burst?'), shown.top, vim.inspect(shown))
    assert.is_true(shown.bottom < shown.last, vim.inspect(shown))
    H.screen('follow-up-at-its-top')
    H.assert_no_errors()
  end)

  --- Asks a short first question, then a follow-up whose answer streams in long (deltas
  --- fed as the client's RPC layer does, the screen redrawn after each as a UI does),
  --- calling `during(i)` after delta i. Returns the follow-up's ask when it is done.
  ---@param during fun(i: integer)
  local function stream_long_follow_up(during)
    local provider = H.fake_provider({
      { text = 'Short first answer.' },
      H.answer_turn(long_answer(), {}, { delay_ms = 4000 }),
    })
    local s = H.session(provider)
    vim.cmd('CopilotAsk how are requests rate limited?')
    assert.are.equal('done', H.wait_ask().status)
    vim.cmd('CopilotFollowUp and the burst?')
    local ask = require('copilot_ls').last()
    H.wait(H.timeout, function()
      return #provider.requests() >= 2
    end, 'the follow-up to reach the model')
    for i = 1, 40 do
      assert.are.equal('waiting', ask.status, 'the reply came before the deltas')
      deliver(s.client, ask.partial_token, {
        turn = 1,
        text = ('Streamed paragraph %d about the burst.\n\n'):format(i),
      })
      vim.cmd('redraw')
      during(i)
    end
    assert.are.equal('done', H.wait_ask().status)
    vim.cmd('redraw')
    return ask
  end

  it('keeps the question in view while a long follow-up streams, and when it ends', function()
    local answer = require('copilot_ls.answer')
    local tops = {}
    stream_long_follow_up(function(i)
      local shown = view()
      local question = H.row_of('> and the burst?')
      assert.is_true(
        shown.top <= question and question <= shown.bottom,
        ('delta %d: the question (row %d) scrolled out of view: %s'):format(i, question, vim.inspect(shown))
      )
      tops[i] = shown.top
      if i == 40 then
        H.screen('follow-up-streaming')
      end
    end)
    local question = H.row_of('> and the burst?')
    local after = view()
    assert.are.equal(question, after.top, 'the answer opens at its question: ' .. vim.inspect(after))
    assert.are.equal(tops[40], after.top, 'no jump when the answer arrives')
    assert.are.equal(question, vim.api.nvim_win_get_cursor(answer.winid)[1])
    H.screen('follow-up-streamed')
    H.assert_no_errors()
  end)

  it('follows the user who moved while a follow-up streams, and stays there when it ends', function()
    local answer = require('copilot_ls.answer')
    stream_long_follow_up(function(i)
      if i == 10 then
        -- The user goes to the bottom to watch the text come in.
        vim.api.nvim_set_current_win(answer.winid)
        vim.cmd('normal! G')
      elseif i > 10 then
        local shown = view()
        assert.are.equal(shown.last, shown.bottom, ('delta %d: %s'):format(i, vim.inspect(shown)))
      end
    end)
    local after = view()
    assert.are.equal(after.last, after.bottom, 'still at the bottom: ' .. vim.inspect(after))
    assert.are.equal(after.last, vim.api.nvim_win_get_cursor(answer.winid)[1])
    H.assert_no_errors()
  end)

  it('keeps the thread window options out of other buffers and windows', function()
    local provider = H.fake_provider({
      { text = 'Let me look.', tool_calls = { H.tool_call('c1', 'search_code', { pattern = 'rate_limit' }) } },
      H.answer_turn('The limiter is `RateLimiter`.'),
    })
    H.session(provider)
    local before = { foldmethod = vim.wo.foldmethod, foldtext = vim.wo.foldtext, conceallevel = vim.wo.conceallevel }
    vim.cmd('CopilotAsk how are requests rate limited?')
    assert.are.equal('done', H.wait_ask().status)
    local answer = require('copilot_ls.answer')
    assert.are.equal(answer.winid, vim.api.nvim_get_current_win())
    local folded = H.row_of('Let me look.')
    assert.are_not.equal(-1, vim.fn.foldclosed(folded), 'the reasoning is folded')
    local function plain(where)
      assert.are.equal(before.foldmethod, vim.wo.foldmethod, where)
      assert.are.equal(before.foldtext, vim.wo.foldtext, where)
      assert.are.equal(before.conceallevel, vim.wo.conceallevel, where)
      assert.is_nil(vim.wo.foldexpr:find('copilot_ls', 1, true), where)
      assert.are.equal(-1, vim.fn.foldclosed(1), where)
    end

    -- :checkhealth from the thread opens its report in a new tab, split off the thread.
    vim.cmd('silent checkhealth copilot_ls')
    assert.are.equal('checkhealth', vim.bo.filetype)
    plain(':checkhealth')
    local screen = table.concat(H.screen('checkhealth-from-the-thread'), '\n')
    assert.matches('copilot_ls', screen, 1, true)
    assert.is_nil(screen:find('Reasoning', 1, true), screen)
    vim.cmd('tabclose')

    -- A new window split off the thread, and another buffer shown in the thread's window.
    vim.api.nvim_set_current_win(answer.winid)
    vim.cmd('new')
    plain(':new')
    vim.cmd('close')
    vim.api.nvim_set_current_win(answer.winid)
    vim.cmd('edit src/main.rs')
    plain(':edit in the thread window')
    -- The thread shown there again has its own options back.
    vim.cmd('buffer ' .. answer.bufnr)
    assert.are.equal('expr', vim.wo.foldmethod)
    assert.matches('copilot_ls', vim.wo.foldtext, 1, true)
    assert.are_not.equal(-1, vim.fn.foldclosed(H.row_of('Let me look.')))
    H.assert_no_errors()
  end)

  it('says in words why an ask stopped: the step limit, no model', function()
    local s = H.session(H.fake_provider({
      { tool_calls = { H.tool_call('c1', 'search_code', { pattern = 'limit' }) } },
    }), { maxSteps = 1 })
    vim.cmd('CopilotAsk where is the limit?')
    assert.are.equal('max_steps', H.wait_ask().result.stopReason)
    local text = H.thread_text()
    assert.matches('_Stopped: the step limit (maxSteps) was reached before a final answer._', text, 1, true)
    assert.is_nil(text:find('_Stopped: max_steps_', 1, true), text)

    require('copilot_ls').setup({ provider = 'none' })
    vim.cmd('CopilotAsk how are requests rate limited?')
    local ask = H.wait_ask()
    assert.are.equal('no_provider', ask.result.stopReason)
    text = H.thread_text()
    assert.is_nil(text:find('no_provider', 1, true), text)
    assert.are.equal(1, select(2, text:gsub('No model is configured', '')), text)
    H.screen('no-model-answer')
    assert.is_truthy(s.client)
  end)

  it('lists definitions as the places of a no-model answer, never a docstring or a guard', function()
    -- A Python module that opens with a docstring in the question's words, imports and an
    -- `if TYPE_CHECKING:` guard, above the function that checks the limit (#24 item 11).
    local workspace = H.workspace
    finally(function()
      H.workspace = workspace
    end)
    H.workspace = function()
      local dir = workspace()
      vim.fn.writefile(vim.split(REDIRECTS_PY, '\n'), dir .. '/src/redirects.py')
      return dir
    end
    -- Asked from that file, as a user reading it would.
    H.session(nil, { provider = 'none' }, 'src/redirects.py')
    vim.cmd('CopilotAsk How are redirects limited?')
    local ask = H.wait_ask()
    assert.are.equal('no_provider', ask.result.stopReason)
    local in_module = vim.tbl_filter(function(c)
      return c.path == 'src/redirects.py'
    end, ask.result.citations)
    assert.are.same({ 20 }, vim.tbl_map(function(c)
      return c.line
    end, in_module), vim.inspect(ask.result.citations))
    local text = H.thread_text()
    assert.matches('`src/redirects.py:20` — `follow_redirects`', text, 1, true)
    assert.is_nil(text:find('— `"""`', 1, true), text)
    assert.is_nil(text:find('TYPE_CHECKING', 1, true), text)
    H.screen('no-model-places')
    H.assert_no_errors()
  end)

  it('shows a failure once, without the plugin prefix twice', function()
    local stub = H.http_stub(401, '{"error":{"message":"Incorrect API key provided"}}')
    H.session({ url = stub.url })
    vim.cmd('CopilotAsk why?')
    assert.are.equal('error', H.wait_ask().status)
    local text = H.thread_text()
    assert.matches('\n_Failed:_ provider returned 401', text, 1, true)
    assert.is_nil(text:find('_Failed:_ copilot-ls:', 1, true), text)
    H.screen('failed')
  end)

  it('points a timed-out ask at requestTimeoutSecs', function()
    -- The server retries a call that timed out: each attempt waits past the limit.
    local late = { text = 'late', delay_ms = 5000 }
    H.session(H.fake_provider({ late, late, late, late }), { requestTimeoutSecs = 1 })
    vim.cmd('CopilotAsk why so slow?')
    local ask = H.wait_ask()
    assert.are.equal('error', ask.status)
    assert.matches('requestTimeoutSecs', ask.error, 1, true)
    local errors = H.notified(ERROR)
    assert.are.equal(1, #errors)
    assert.matches('requestTimeoutSecs', errors[1].msg, 1, true)
    assert.is_nil(errors[1].msg:find('checkhealth', 1, true), errors[1].msg)
  end)

  it('moves `path:line` mentions in the answer with the cited text; <CR> follows them', function()
    local s = H.session(H.fake_provider({
      H.answer_turn(
        'Requests are checked in src/rate_limit.rs:56 (the body is src/rate_limit.rs:57-61).',
        { { path = 'src/rate_limit.rs', line = 56, end_line = 61, note = 'check admits or refuses' } }
      ),
    }))
    vim.cmd('CopilotAsk how are requests rate limited?')
    assert.are.equal('done', H.wait_ask().status)
    H.wait(H.timeout, function()
      return #H.diagnostics(s.bufnr, 'citation') > 0
    end, 'the citation diagnostic')
    -- Three lines inserted above the cited code: the server republishes the citation.
    vim.api.nvim_buf_set_lines(s.bufnr, 0, 0, false, { '// one', '// two', '// three' })
    H.wait(H.timeout, function()
      return H.thread_text():find('- src/rate_limit.rs:59-64 — check admits or refuses', 1, true)
    end, 'the citation to move')
    local text = H.thread_text()
    assert.matches('checked in src/rate_limit.rs:59 (the body is src/rate_limit.rs:60-64)', text, 1, true)
    assert.are.equal(59, vim.fn.getqflist()[1].lnum)
    H.screen('mentions-follow')

    -- <CR> on the mention in the answer's text goes where the citation and the list say.
    vim.cmd('CopilotAnswer')
    local row = H.row_of('checked in src/rate_limit.rs:')
    local line = vim.api.nvim_buf_get_lines(0, row - 1, row, false)[1]
    vim.api.nvim_win_set_cursor(0, { row, line:find('src/rate_limit.rs:', 1, true) + 2 })
    H.press('<CR>')
    assert.are.equal(s.bufnr, vim.api.nvim_get_current_buf())
    assert.are.equal(59, vim.api.nvim_win_get_cursor(0)[1])
    assert.matches('pub fn check', vim.api.nvim_get_current_line(), 1, true)
    assert.are.equal(0, #H.notified(WARN))
  end)
end)
