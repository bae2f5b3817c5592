-- Each exchange's citations stay with that exchange, end to end against the real
-- copilot-ls and the scripted fake provider: a follow-up's diagnostics replace the earlier
-- answer's, arriving before the follow-up's reply or after it (notifications and replies
-- travel apart), and neither order may move one answer's citation to the other's line.
local H = require('helpers')

local CHECK_NOTE = 'check admits or refuses'

-- Three citations of src/rate_limit.rs, then a follow-up citing the same file (at the same
-- index, 0, as the first answer's `check`) and another file.
local STEPS = {
  H.answer_turn('Requests are checked in src/rate_limit.rs:56.', {
    { path = 'src/rate_limit.rs', line = 56, end_line = 61, note = CHECK_NOTE },
    { path = 'src/rate_limit.rs', line = 25, note = 'try_acquire takes a token' },
    { path = 'src/rate_limit.rs', line = 7, note = 'the bucket' },
  }),
  H.answer_turn('The capacity is a field (src/rate_limit.rs:8), set from the burst.', {
    { path = 'src/rate_limit.rs', line = 8, note = 'capacity' },
    { path = 'src/config.rs', line = 15, note = 'the burst' },
  }),
}

---@param bufnr integer
---@param message string
---@return boolean
local function has_citation(bufnr, message)
  return vim.iter(H.diagnostics(bufnr, 'citation')):any(function(d)
    return d.message == message
  end)
end

--- Asks the first question and waits for its three citation diagnostics.
---@return {ws: string, client: vim.lsp.Client, bufnr: integer}
local function first_answer()
  local s = H.session(H.fake_provider(STEPS))
  vim.cmd('CopilotAsk how are requests rate limited?')
  assert.are.equal('done', H.wait_ask().status)
  H.wait(H.timeout, function()
    return #H.diagnostics(s.bufnr, 'citation') == 3
  end, 'the first answer citation diagnostics')
  return s
end

--- The first exchange's part of the thread, and the follow-up's.
---@return string first
---@return string second
local function exchanges()
  local text = H.thread_text()
  local at = assert(text:find('\n---\n', 1, true), text)
  return text:sub(1, at), text:sub(at)
end

describe('citations of a conversation', function()
  before_each(function()
    H.load_plugin()
    H.capture_notify()
  end)
  after_each(H.cleanup)

  it('stay with their exchange when the follow-up diagnostics come before its reply', function()
    local s = first_answer()
    -- The follow-up's reply is held until its diagnostics are in and the thread redrew
    -- with them, as when the reply comes a moment after them.
    local release
    s.client.request = function(self, method, params, handler, ...)
      if method == 'copilot/ask' then
        local reply = handler
        handler = function(...)
          local args = { ... }
          release = function()
            reply(unpack(args, 1, 4))
          end
        end
      end
      return getmetatable(self).__index.request(self, method, params, handler, ...)
    end
    vim.cmd('CopilotFollowUp where is the capacity set?')
    H.wait(H.timeout, function()
      return release ~= nil and has_citation(s.bufnr, 'capacity')
    end, 'the follow-up diagnostics, its reply held')
    -- What the DiagnosticChanged handler does while the reply is on its way.
    require('copilot_ls.answer').refresh()
    release()
    assert.are.equal('done', H.wait_ask().status)
    require('copilot_ls.answer').refresh()

    local first, second = exchanges()
    assert.matches('- src/rate_limit.rs:56-61 — ' .. CHECK_NOTE, first, 1, true)
    assert.matches('- src/rate_limit.rs:25 — try_acquire', first, 1, true)
    assert.matches('- src/rate_limit.rs:7 — the bucket', first, 1, true)
    assert.matches('checked in src/rate_limit.rs:56.', first, 1, true)
    assert.is_nil(first:find('rate_limit.rs:8', 1, true), first)
    assert.matches('- src/rate_limit.rs:8 — capacity', second, 1, true)
    assert.matches('- src/config.rs:15 — the burst', second, 1, true)
    H.screen('follow-up-citations-stay')

    -- <CR> on the first exchange's citation goes to its own line.
    vim.api.nvim_win_set_cursor(0, { H.row_of('- src/rate_limit.rs:56-61'), 0 })
    H.press('<CR>')
    assert.are.equal(s.bufnr, vim.api.nvim_get_current_buf())
    assert.are.equal(56, vim.api.nvim_win_get_cursor(0)[1])
    -- Its quickfix list, one back on the stack, too.
    vim.cmd('silent colder')
    assert.are.equal(56, vim.fn.getqflist()[1].lnum)
    H.assert_no_errors()
  end)

  it('stay with their exchange when the follow-up reply comes before its diagnostics', function()
    local s = first_answer()
    -- The follow-up's diagnostics are held until its reply was handled: meanwhile the
    -- buffer still has the first answer's, `check` at citation index 0.
    local held, publish = {}, vim.lsp.handlers['textDocument/publishDiagnostics']
    finally(function()
      vim.lsp.handlers['textDocument/publishDiagnostics'] = publish
    end)
    vim.lsp.handlers['textDocument/publishDiagnostics'] = function(...)
      table.insert(held, { ... })
    end
    vim.cmd('CopilotFollowUp where is the capacity set?')
    assert.are.equal('done', H.wait_ask().status)
    assert.is_true(has_citation(s.bufnr, CHECK_NOTE))

    local _, second = exchanges()
    assert.matches('- src/rate_limit.rs:8 — capacity', second, 1, true)
    assert.matches('field (src/rate_limit.rs:8)', second, 1, true)
    assert.are.equal(8, vim.fn.getqflist()[1].lnum)

    -- Its diagnostics arrive: everything stays where it is.
    vim.lsp.handlers['textDocument/publishDiagnostics'] = publish
    for _, call in ipairs(held) do
      publish(unpack(call, 1, 4))
    end
    H.wait(H.timeout, function()
      return has_citation(s.bufnr, 'capacity')
    end, 'the follow-up diagnostics')
    require('copilot_ls.answer').refresh()
    local first
    first, second = exchanges()
    assert.matches('- src/rate_limit.rs:56-61 — ' .. CHECK_NOTE, first, 1, true)
    assert.matches('- src/rate_limit.rs:8 — capacity', second, 1, true)
    H.assert_no_errors()
  end)
end)
