-- Accepting a suggested edit, end to end against the real copilot-ls: `ga` in the thread
-- (on any line of the edit, its diff's fences included) applies it without asking again,
-- an edit that did not land is not called applied, one accepted through
-- vim.lsp.buf.code_action() reads "applied" in the thread, the answer's citation of the
-- line its edit changed stays on it, and `ga` then `gr` redraw cleanly under tree-sitter.
local H = require('helpers')

local WARN = vim.log.levels.WARN

local BURST_EDIT = {
  {
    tool_calls = {
      H.tool_call('call_1', 'propose_edit', {
        path = 'src/config.rs',
        old_text = 'read("TOLLBOOTH_BURST", 10)',
        new_text = 'read("TOLLBOOTH_BURST", 20)',
        title = 'Raise the default burst',
      }),
    },
  },
  H.answer_turn('Raise the default burst to 20.', { { path = 'src/config.rs', line = 15 } }),
}

--- Records vim.fn.confirm() (Neovim's "Apply all changes?") and answers `choice`.
---@param choice integer 1 Yes, 2 No
---@return string[] the messages it was asked
local function stub_confirm(choice)
  local asked, confirm = {}, vim.fn.confirm
  finally(function()
    vim.fn.confirm = confirm
  end)
  vim.fn.confirm = function(message)
    table.insert(asked, message)
    return choice
  end
  return asked
end

-- Two edits of src/config.rs in one answer: the burst (line 15) and the port (line 14).
local TWO_EDITS = {
  {
    tool_calls = {
      vim.deepcopy(BURST_EDIT[1].tool_calls[1]),
      H.tool_call('call_2', 'propose_edit', {
        path = 'src/config.rs',
        old_text = 'read("TOLLBOOTH_PORT", 8080)',
        new_text = 'read("TOLLBOOTH_PORT", 9090)',
        title = 'Move the port',
      }),
    },
  },
  H.answer_turn('Raise the burst and move the port.', { { path = 'src/config.rs', line = 15 } }),
}

local function line15(bufnr)
  return vim.api.nvim_buf_get_lines(bufnr, 14, 15, false)[1]
end

--- Asks for the burst edit in a session on src/config.rs; returns once it is offered.
---@param steps? table[] the provider's script (default: the burst edit)
local function offered_edit(steps)
  local s = H.session(H.fake_provider(steps or BURST_EDIT), nil, 'src/config.rs')
  vim.cmd('CopilotAsk how do I allow bigger bursts?')
  assert.are.equal('done', H.wait_ask().status)
  local edits = #H.wait_ask().result.edits
  H.wait(H.timeout, function()
    return #H.diagnostics(s.bufnr, 'suggested-edit') == edits
      and #H.diagnostics(s.bufnr, 'citation') > 0
  end, 'the suggested-edit and citation diagnostics')
  return s
end

--- The screen row showing `text`, from H.screen's rows.
---@param rows string[]
---@param text string
---@return string?
local function screen_row(rows, text)
  for _, row in ipairs(rows) do
    if row:find(text, 1, true) then
      return row
    end
  end
  return nil
end

describe('accepting a suggested edit', function()
  before_each(function()
    H.load_plugin()
    H.capture_notify()
  end)
  after_each(H.cleanup)

  it('ga on the ```diff line applies it at once: no second confirmation, no Enter', function()
    local s = offered_edit()
    H.screen('edit-offered')
    -- Were Neovim to ask, the answer would be No: nothing would change.
    local asked = stub_confirm(2)
    vim.api.nvim_win_set_cursor(0, { H.row_of('```diff'), 0 })
    H.press('ga')
    H.wait(H.timeout, function()
      return line15(s.bufnr):find('TOLLBOOTH_BURST", 20', 1, true)
    end, 'the edit to apply')
    assert.are.same({}, asked)
    H.wait(H.timeout, function()
      return H.thread_text():find('— _applied_', 1, true)
    end, 'the thread to say applied')
    for _, n in ipairs(H.notifications) do
      assert.is_nil(n.msg:find('Applied changes', 1, true), n.msg)
      assert.is_nil(n.msg:find('no suggested edit', 1, true), n.msg)
    end
    H.screen('edit-applied-with-ga')
    H.assert_no_errors()
  end)

  it('does not call an edit applied when the buffer did not change', function()
    local s = offered_edit()
    -- Neovim refuses the edit (as it does one made for an older version of the buffer).
    local apply = vim.lsp.util.apply_workspace_edit
    finally(function()
      vim.lsp.util.apply_workspace_edit = apply
    end)
    vim.lsp.util.apply_workspace_edit = function() end
    local done
    vim.api.nvim_win_set_cursor(0, { H.row_of('Raise the default burst —'), 0 })
    require('copilot_ls.answer').accept(function(ok)
      done = ok
    end)
    H.wait(H.timeout, function()
      return done ~= nil
    end, 'ga to finish')
    assert.is_false(done)
    assert.matches('TOLLBOOTH_BURST", 10', line15(s.bufnr), 1, true)
    local text = H.thread_text()
    assert.is_nil(text:find('_applied_', 1, true), text)
    assert.matches('ga accepts it', text, 1, true)
    assert.matches('not applied', H.notified(WARN)[1].msg, 1, true)

    -- It is still on offer: ga again, with Neovim applying, does it.
    vim.lsp.util.apply_workspace_edit = apply
    H.press('ga')
    H.wait(H.timeout, function()
      return H.thread_text():find('— _applied_', 1, true)
    end, 'the thread to say applied')
    assert.matches('TOLLBOOTH_BURST", 20', line15(s.bufnr), 1, true)
  end)

  it('says "applied" for an edit accepted through code_action(), and offers one declined there', function()
    local s = offered_edit()
    require('copilot_ls.answer').close()
    vim.api.nvim_set_current_buf(s.bufnr)
    vim.api.nvim_win_set_cursor(0, { 15, 20 })
    local function code_action()
      vim.lsp.buf.code_action({
        apply = true,
        filter = function(a)
          return a.title == 'Copilot: Raise the default burst'
        end,
      })
    end

    -- "Apply all changes?" answered No: nothing changed, the thread still offers it.
    local asked = stub_confirm(2)
    code_action()
    H.wait(H.timeout, function()
      return #asked > 0
    end, 'Neovim to ask')
    assert.matches('TOLLBOOTH_BURST", 10', line15(s.bufnr), 1, true)
    local text = H.thread_text()
    assert.matches('ga accepts it', text, 1, true)
    assert.is_nil(text:find('_applied_', 1, true), text)

    -- Yes: the server withdraws it, and the thread says why.
    vim.fn.confirm = function()
      return 1
    end
    code_action()
    H.wait(H.timeout, function()
      return line15(s.bufnr):find('TOLLBOOTH_BURST", 20', 1, true)
    end, 'the edit to apply')
    H.wait(H.timeout, function()
      return H.thread_text():find('- Raise the default burst — src/config.rs:15 — _applied_', 1, true)
    end, 'the thread to say applied')
    text = H.thread_text()
    assert.is_nil(text:find('no longer offered', 1, true), text)
    vim.cmd('CopilotAnswer')
    H.screen('edit-applied-with-code-action')
    H.assert_no_errors()
  end)

  it('keeps the citation of the line its own edit changed (ga), and moves it with the text', function()
    -- The answer cites src/config.rs:15, the line its edit rewrites. The server finds a
    -- citation by its text, so it withdraws that one's diagnostic once the line changed;
    -- the line is still the one cited, only changed (#45 item 5).
    local s = offered_edit()
    vim.api.nvim_win_set_cursor(0, { H.row_of('Raise the default burst —'), 0 })
    H.press('ga')
    H.wait(H.timeout, function()
      return H.thread_text():find('— _applied_', 1, true)
    end, 'the thread to say applied')
    H.wait(H.timeout, function()
      return #H.diagnostics(s.bufnr, 'citation') == 0
    end, 'the server to withdraw the citation of the changed line')
    -- What the DiagnosticChanged handler does once that arrived.
    require('copilot_ls.answer').refresh()
    local text = H.thread_text()
    assert.matches('\n- src/config.rs:15\n', text, 1, true)
    assert.is_nil(text:find('cited text is gone', 1, true), text)
    require('copilot_ls.quickfix').update(require('copilot_ls').last())
    assert.are.equal(15, vim.fn.getqflist()[1].lnum)
    H.screen('edit-applied-citation-kept')

    -- Lines inserted above: it moves with the changed line.
    vim.api.nvim_buf_set_lines(s.bufnr, 0, 0, false, { '// one', '// two' })
    require('copilot_ls.answer').refresh()
    assert.matches('\n- src/config.rs:17\n', H.thread_text(), 1, true)
    vim.cmd('CopilotAnswer')
    vim.api.nvim_win_set_cursor(0, { H.row_of('- src/config.rs:17'), 0 })
    H.press('<CR>')
    assert.are.equal(s.bufnr, vim.api.nvim_get_current_buf())
    assert.are.equal(17, vim.api.nvim_win_get_cursor(0)[1])
    assert.matches('TOLLBOOTH_BURST", 20', vim.api.nvim_get_current_line(), 1, true)
    H.assert_no_errors()
  end)

  it('ga on one edit then gr on another redraws without a tree-sitter error, markers concealed', function()
    local s = offered_edit(TWO_EDITS)
    local answer = require('copilot_ls.answer')
    if not answer.treesitter then
      pending('no markdown parser in this Neovim')
      return
    end
    -- Drawn once, then as on a slow machine or in a long thread: the highlighter's parses
    -- end on a later turn of the event loop.
    H.screen('ga-then-gr-offered')
    finally(H.slow_treesitter())
    vim.v.errmsg = ''
    vim.api.nvim_win_set_cursor(0, { H.row_of('Raise the default burst —'), 0 })
    H.press('ga')
    H.wait(H.timeout, function()
      return line15(s.bufnr):find('TOLLBOOTH_BURST", 20', 1, true)
        and H.thread_text():find('— _applied_', 1, true)
    end, 'the thread to say applied')
    -- Drawn from trees of the text now: nothing concealed where it no longer is.
    local rows = H.screen('ga-then-gr-applied')
    assert.is_truthy(screen_row(rows, '- Move the port — src/config.rs:14'), table.concat(rows, '\n'))
    assert.is_truthy(screen_row(rows, 'burst — src/config.rs:15 — applied'), table.concat(rows, '\n'))
    vim.api.nvim_win_set_cursor(0, { H.row_of('Move the port —'), 0 })
    H.press('gr')
    assert.matches('- Move the port — src/config.rs:14 — _rejected_', H.thread_text(), 1, true)
    rows = H.screen('ga-then-gr-rejected')
    local messages = vim.fn.execute('messages')
    assert.is_nil(vim.v.errmsg:find('Decoration provider', 1, true), vim.v.errmsg)
    assert.is_nil(messages:find('Decoration provider', 1, true), messages)
    -- The cursor is on the rejected edit's line: its marker reads as markdown, as the
    -- applied one above does.
    assert.are.equal(H.row_of('Move the port —'), vim.api.nvim_win_get_cursor(answer.winid)[1])
    local rejected = screen_row(rows, 'Move the port')
    assert.is_truthy(rejected, table.concat(rows, '\n'))
    assert.matches('— rejected', rejected, 1, true)
    assert.is_nil(rejected:find('_rejected_', 1, true), rejected)
    assert.is_nil(screen_row(rows, '_applied_'), table.concat(rows, '\n'))
    H.assert_no_errors()
  end)
end)
