local H = require('helpers')
local TWO_EDITS = {
  {
    tool_calls = {
      H.tool_call('call_1', 'propose_edit', {
        path = 'src/config.rs',
        old_text = 'read("TOLLBOOTH_BURST", 10)',
        new_text = 'read("TOLLBOOTH_BURST", 20)',
        title = 'Raise the default burst',
      }),
      H.tool_call('call_2', 'propose_edit', {
        path = 'src/config.rs',
        old_text = 'read("TOLLBOOTH_PORT", 8080)',
        new_text = 'read("TOLLBOOTH_PORT", 9090)',
        title = 'Move the port',
      }),
    },
  },
  H.answer_turn('Raise the burst (src/config.rs:15) and move the port.', { { path = 'src/config.rs', line = 15 } }),
}
local function set_timeout(ns)
  local fn = require('vim.treesitter.languagetree')._async_parse
  for i = 1, 50 do
    local name, value = debug.getupvalue(fn, i)
    if not name then break end
    if name == 'default_parse_timeout_ns' then
      debug.setupvalue(fn, i, ns)
      return value
    end
  end
  error('no upvalue')
end
describe('scratch', function()
  before_each(function()
    H.load_plugin()
    H.capture_notify()
  end)
  after_each(H.cleanup)
  it('ga then gr', function()
    local s = H.session(H.fake_provider(TWO_EDITS), nil, 'src/config.rs')
    vim.cmd('CopilotAsk how?')
    assert.are.equal('done', H.wait_ask().status)
    H.wait(H.timeout, function()
      return #H.diagnostics(s.bufnr, 'suggested-edit') == 2
    end, 'edits')
    H.screen('s1')
    local old = set_timeout(1)
    vim.api.nvim_win_set_cursor(0, { H.row_of('Raise the default burst —'), 0 })
    H.press('ga')
    H.wait(H.timeout, function()
      return H.thread_text():find('_applied_', 1, true)
    end, 'applied')
    H.screen('s2')
    vim.api.nvim_win_set_cursor(0, { H.row_of('Move the port —'), 0 })
    H.press('gr')
    print(table.concat(H.screen('s3'), '\n'))
    vim.wait(300)
    print(table.concat(H.screen('s4'), '\n'))
    set_timeout(old)
    print('ERRMSG', vim.v.errmsg)
    print(vim.fn.execute('messages'))
  end)
end)
