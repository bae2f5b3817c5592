-- Failures end to end, against the real copilot-ls and the scripted fake provider: a
-- server that stops mid-question, a provider's error as one short ERROR line with its fix
-- (never the key), the thread showing the whole message first, and the server's own INFO
-- lines kept out of lsp.log.
local H = require('helpers')

local ERROR = vim.log.levels.ERROR

local function answer_text()
  return H.text(require('copilot_ls.answer').bufnr)
end

describe('a failed question', function()
  before_each(function()
    H.load_plugin()
    H.capture_notify()
  end)
  after_each(H.cleanup)

  it('ends a question whose server stops, with one error', function()
    local provider = H.fake_provider({ { hang = true } })
    local s = H.session(provider)
    vim.cmd('CopilotAsk what does main do?')
    local ask = require('copilot_ls').last()
    H.wait(H.timeout, function()
      return #provider.requests() == 1
    end, 'the provider to receive the request')
    s.client:stop(true)
    H.wait(H.timeout, function()
      return ask.status ~= 'waiting'
    end, 'the ask to end')
    assert.are.equal('error', ask.status)
    local errors = H.notified(ERROR)
    assert.are.equal(1, #errors)
    assert.matches('the server stopped during the question (fix: see :LspLog)', errors[1].msg, 1, true)
    assert.matches('_Failed:_', answer_text(), 1, true)
  end)

  it('reports a provider error as one ERROR line with the fix, without the key', function()
    local provider = H.fake_provider({
      { status = 401, body = '{"error":{"message":"Incorrect API key provided: ' .. H.key .. '"}}' },
    })
    H.session(provider)
    vim.cmd('CopilotAsk where is the port read?')
    local ask = H.wait_ask()
    assert.are.equal('error', ask.status)
    local errors = H.notified(ERROR)
    assert.are.equal(1, #errors, vim.inspect(H.notifications))
    local line = errors[1].msg
    assert.is_nil(line:find('\n'))
    assert.matches('^copilot%-ls: ', line)
    assert.matches('401', line, 1, true)
    assert.matches('(fix: check the API key in $' .. H.key_env, line, 1, true)
    assert.is_nil(line:find(H.key, 1, true))
    assert.matches('_Failed:_', answer_text(), 1, true)
  end)

  it('keeps an error notification short, with the window already showing the error', function()
    local long = ('the model server said a great many things about this request; '):rep(8)
    local provider = H.fake_provider({ { status = 400, body = '{"error":{"message":"' .. long .. '"}}' } })
    H.session(provider)
    local window_at_notify
    vim.notify = function(msg, level)
      table.insert(H.notifications, { msg = msg, level = level })
      window_at_notify = answer_text()
    end
    vim.cmd('CopilotAsk where is the port read?')
    local ask = H.wait_ask()
    assert.are.equal('error', ask.status)
    local errors = H.notified(ERROR)
    assert.are.equal(1, #errors)
    -- Short enough not to wrap on a normal screen, and it still says what to do.
    assert.is_true(vim.fn.strchars(errors[1].msg) <= 140, errors[1].msg)
    assert.matches('^copilot%-ls: provider returned 400', errors[1].msg)
    assert.matches('(fix: ', errors[1].msg, 1, true)
    -- The window has all the server said, and had it before the notification went out.
    local function count(text)
      return select(2, text:gsub('great many things', ''))
    end
    assert.is_true(count(answer_text()) >= 3, answer_text())
    assert.is_true(count(errors[1].msg) <= 1, errors[1].msg)
    assert.matches('_Failed:_', window_at_notify, 1, true)
    assert.is_nil(window_at_notify:find('Waiting', 1, true))
  end)

  it('keeps server INFO lines out of lsp.log (Neovim logs stderr as ERROR)', function()
    local log = vim.lsp.log.get_filename()
    local function server_info_lines()
      local count = 0
      for _, line in ipairs(vim.fn.filereadable(log) == 1 and vim.fn.readfile(log) or {}) do
        if line:find('"stderr"', 1, true) and line:find(' INFO ', 1, true) then
          count = count + 1
        end
      end
      return count
    end
    local before = server_info_lines()
    H.session(H.fake_provider({ { text = 'ok' } }))
    vim.cmd('CopilotAsk hello?')
    assert.are.equal('done', H.wait_ask().status)
    H.cleanup()
    assert.are.equal(before, server_info_lines())

    -- The same server with log_level = 'info' does write them: the check above can fail.
    H.capture_notify()
    H.session(H.fake_provider({ { text = 'ok' } }), { log_level = 'info' })
    vim.cmd('CopilotAsk hello?')
    assert.are.equal('done', H.wait_ask().status)
    H.wait(H.timeout, function()
      return server_info_lines() > before
    end, 'INFO lines with log_level = info')
  end)
end)
