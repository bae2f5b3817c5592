-- Accepting a suggested edit, end to end against the real copilot-ls: `ga` in the thread
-- (on any line of the edit, its diff's fences included) applies it without asking again,
-- an edit that did not land is not called applied, and one accepted through
-- vim.lsp.buf.code_action() reads "applied" in the thread.
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

local function line15(bufnr)
  return vim.api.nvim_buf_get_lines(bufnr, 14, 15, false)[1]
end

--- Asks for the burst edit in a session on src/config.rs; returns once it is offered.
local function offered_edit()
  local s = H.session(H.fake_provider(BURST_EDIT), nil, 'src/config.rs')
  vim.cmd('CopilotAsk how do I allow bigger bursts?')
  assert.are.equal('done', H.wait_ask().status)
  H.wait(H.timeout, function()
    return #H.diagnostics(s.bufnr, 'suggested-edit') > 0
  end, 'the suggested-edit diagnostic')
  return s
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
end)
