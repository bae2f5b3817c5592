-- The plugin without a model: commands, setup() and its options, the server's command
-- line, errors when the binary is missing, the help file.
local H = require('helpers')

describe('plugin', function()
  after_each(H.cleanup)

  it('defines its commands without loading the Lua module', function()
    assert.is_nil(package.loaded['copilot_ls'])
    H.load_plugin()
    for _, name in ipairs({ 'CopilotAsk', 'CopilotFollowUp', 'CopilotStop', 'CopilotClear', 'CopilotAnswer', 'CopilotSend' }) do
      assert.are.equal(2, vim.fn.exists(':' .. name), name)
    end
    assert.is_nil(package.loaded['copilot_ls'])
    assert.is_nil(package.loaded['copilot_ls.ask'])
    local ask = vim.api.nvim_get_commands({})['CopilotAsk']
    assert.are.equal('*', ask.nargs)
    assert.is_truthy(ask.range)
  end)

  it('merges setup() options over the defaults and passes server settings', function()
    H.load_plugin()
    local config = require('copilot_ls.config')
    assert.is_true(require('copilot_ls').setup({
      enable = false,
      model = 'm1',
      maxSteps = 3,
      stream = false,
      answer = { layout = 'split' },
    }))
    assert.are.equal('split', config.options.answer.layout)
    assert.are.equal(0.8, config.options.answer.width)
    assert.are.same({ '.git' }, config.options.root_markers)
    local lsp = vim.lsp.config.copilot_ls
    assert.are.same({ model = 'm1', maxSteps = 3, stream = false }, lsp.init_options)
    assert.are.same({ ['copilot-ls'] = { model = 'm1', maxSteps = 3, stream = false } }, lsp.settings)
    assert.is_nil(lsp.filetypes)
    assert.are.equal('function', type(lsp.root_dir))

    -- Another setup() changes what it names; the rest keeps its value, as in the server.
    require('copilot_ls').setup({ enable = false, model = 'm2', answer = { width = 0.5 } })
    assert.are.equal('split', config.options.answer.layout)
    assert.are.equal(0.5, config.options.answer.width)
    assert.are.same({ model = 'm2', maxSteps = 3, stream = false }, vim.lsp.config.copilot_ls.init_options)
  end)

  it('sends empty settings as a JSON object, not an array', function()
    H.load_plugin()
    require('copilot_ls').setup({ enable = false })
    local settings = require('copilot_ls.config').server_settings()
    assert.are.equal('{}', vim.json.encode(settings))
    -- What vim.lsp.config() merged with lsp/copilot_ls.lua is what the client sends.
    assert.are.equal('{}', vim.json.encode(vim.lsp.config.copilot_ls.init_options))
    assert.are.equal('{"copilot-ls":{}}', vim.json.encode(vim.lsp.config.copilot_ls.settings))
  end)

  -- The whole order of the lookup: install_spec.lua.
  it('takes the binary from setup(), then $COPILOT_LS_PATH', function()
    H.load_plugin()
    local config = require('copilot_ls.config')
    local saved = vim.env.COPILOT_LS_PATH
    finally(function()
      vim.env.COPILOT_LS_PATH = saved
    end)
    require('copilot_ls').setup({ enable = false })
    vim.env.COPILOT_LS_PATH = '/opt/bin/copilot-ls'
    assert.are.same({ '/opt/bin/copilot-ls' }, config.cmd())
    require('copilot_ls').setup({ enable = false, cmd = { '/x/copilot-ls', 'serve' } })
    assert.are.same({ '/x/copilot-ls', 'serve' }, config.cmd())
    assert.are.same({ '/x/copilot-ls', 'serve' }, vim.lsp.config.copilot_ls.cmd)
  end)

  it("has the version of the repository's server (Cargo.toml), which :checkhealth compares", function()
    H.load_plugin()
    local manifest = table.concat(vim.fn.readfile(H.repo .. '/Cargo.toml'), '\n')
    local version = manifest:match('%[workspace%.package%][^%[]-\nversion%s*=%s*"([^"]+)"')
    assert.is_truthy(version, 'no [workspace.package] version in Cargo.toml')
    assert.are.equal(version, require('copilot_ls').version)
  end)

  it('rejects a bad option with one error line and keeps going', function()
    H.load_plugin()
    H.capture_notify()
    -- enable = false: the good options of a call with a bad one still apply, and
    -- starting a server here would report its missing binary too.
    assert.is_false(require('copilot_ls').setup({ enable = false, maxStep = 3 }))
    assert.is_false(require('copilot_ls').setup({ enable = false, answer = { layout = 'tab' } }))
    local errors = H.notified(vim.log.levels.ERROR)
    assert.are.equal(2, #errors)
    assert.matches('unknown option "maxStep"', errors[1].msg, 1, true)
    assert.matches('answer.layout', errors[2].msg, 1, true)
    for _, e in ipairs(errors) do
      assert.is_nil(e.msg:find('\n'))
    end
  end)

  it('keeps every valid option of a setup() with a typo, and names the right one', function()
    H.load_plugin()
    H.capture_notify()
    local config = require('copilot_ls.config')
    assert.is_false(require('copilot_ls').setup({
      enable = false,
      modle = 'm1',
      max_steps = 4,
      maxSteps = 3,
      stream = false,
    }))
    local errors = H.notified(vim.log.levels.ERROR)
    assert.are.equal(2, #errors, vim.inspect(H.notifications))
    local text = errors[1].msg .. '\n' .. errors[2].msg
    assert.matches('unknown option "modle" (did you mean `model`?)', text, 1, true)
    assert.matches('unknown option "max_steps" (did you mean `maxSteps`?)', text, 1, true)
    for _, e in ipairs(errors) do
      assert.is_nil(e.msg:find('\n'))
    end
    -- The valid keys applied; the bad ones are nowhere.
    assert.are.same({ maxSteps = 3, stream = false }, vim.lsp.config.copilot_ls.init_options)
    assert.is_nil(config.options.modle)
    assert.is_nil(config.options.max_steps)
    -- A name too far from any option gets no guess.
    H.capture_notify()
    require('copilot_ls').setup({ enable = false, frobnicate = 1 })
    assert.matches('unknown option "frobnicate" (see', H.notified(vim.log.levels.ERROR)[1].msg, 1, true)
  end)

  it('refuses bad values without keeping or resending them, nested keys too', function()
    H.load_plugin()
    H.capture_notify()
    local config = require('copilot_ls.config')
    assert.is_false(require('copilot_ls').setup({ enable = false, provider = 'ollama', model = 'm' }))
    assert.is_nil(config.options.provider)
    assert.is_true(require('copilot_ls').setup({ enable = false, maxSteps = 2 }))
    assert.are.same({ model = 'm', maxSteps = 2 }, vim.lsp.config.copilot_ls.init_options)
    assert.are.same({ ['copilot-ls'] = { model = 'm', maxSteps = 2 } }, vim.lsp.config.copilot_ls.settings)

    assert.is_false(require('copilot_ls').setup({ enable = false, answer = { widht = 0.5, height = 0.4 } }))
    assert.are.equal(0.8, config.options.answer.width)
    assert.are.equal(0.4, config.options.answer.height)
    for _, bad in ipairs({
      { maxSteps = 0 },
      { maxSteps = 2.5 },
      { requestTimeoutSecs = 99999 },
      { maxOutputTokens = 0 },
      { baseUrl = 'localhost:11434' },
      { apiKeyEnv = 'sk-abc def' },
      { answer = { width = 2 } },
      { answer = 'float' },
    }) do
      assert.is_false(require('copilot_ls').setup(vim.tbl_extend('force', { enable = false }, bad)), vim.inspect(bad))
    end
    assert.are.same({ model = 'm', maxSteps = 2 }, vim.lsp.config.copilot_ls.init_options)
    local errors = vim.tbl_map(function(e)
      return e.msg
    end, H.notified(vim.log.levels.ERROR))
    local text = table.concat(errors, '\n')
    assert.matches('option provider must be one of "openai", "anthropic", "none", got "ollama"', text, 1, true)
    assert.matches('unknown option "answer.widht" (did you mean `answer.width`?)', text, 1, true)
    assert.matches('option maxSteps must be an integer from 1 to 100, got 0', text, 1, true)
    assert.matches('option answer.width must be a fraction', text, 1, true)
    assert.are.equal(10, #errors, text)

    -- maxOutputTokens is a server setting like the others.
    assert.is_true(require('copilot_ls').setup({ enable = false, maxOutputTokens = 1024 }))
    assert.are.equal(1024, vim.lsp.config.copilot_ls.init_options.maxOutputTokens)

    -- So is history: false turns the server's reading of the git history off.
    assert.is_true(require('copilot_ls').setup({ enable = false, history = false }))
    assert.are.equal(false, vim.lsp.config.copilot_ls.init_options.history)
    assert.is_false(require('copilot_ls').setup({ enable = false, history = 'off' }))
    assert.are.equal(false, vim.lsp.config.copilot_ls.init_options.history)
  end)

  it('asks the server for warnings only on stderr, unless told otherwise', function()
    H.load_plugin()
    local saved = vim.env.COPILOT_LS_LOG
    finally(function()
      vim.env.COPILOT_LS_LOG = saved
    end)
    vim.env.COPILOT_LS_LOG = nil
    require('copilot_ls').setup({ enable = false })
    assert.are.same({ COPILOT_LS_LOG = 'warn' }, vim.lsp.config.copilot_ls.cmd_env)
    vim.env.COPILOT_LS_LOG = 'copilot_ls=debug'
    require('copilot_ls').setup({ enable = false })
    assert.are.same({ COPILOT_LS_LOG = 'copilot_ls=debug' }, vim.lsp.config.copilot_ls.cmd_env)
    require('copilot_ls').setup({ enable = false, log_level = 'info' })
    assert.are.same({ COPILOT_LS_LOG = 'info' }, vim.lsp.config.copilot_ls.cmd_env)
  end)

  it('reports a missing binary once when the first command runs setup() itself', function()
    H.load_plugin()
    -- A fresh module: nobody has called setup().
    package.loaded['copilot_ls'] = nil
    H.capture_notify()
    local binary = require('copilot_ls.binary')
    local saved = { PATH = vim.env.PATH, CARGO_HOME = vim.env.CARGO_HOME, plugin_dir = binary.plugin_dir }
    finally(function()
      vim.env.PATH = saved.PATH
      vim.env.CARGO_HOME = saved.CARGO_HOME
      binary.plugin_dir = saved.plugin_dir
      package.loaded['copilot_ls'] = nil
    end)
    vim.cmd.cd(vim.fn.fnameescape(H.workspace()))
    vim.cmd.edit('src/main.rs')
    -- Nowhere to find one: not beside the plugin, on PATH or in ~/.cargo/bin.
    local empty = vim.fn.tempname() .. '-nothing'
    binary.plugin_dir = empty .. '/a/nvim'
    vim.env.CARGO_HOME = empty
    vim.env.PATH = '/nonexistent'
    vim.cmd('CopilotAsk where is the port read?')
    local errors = H.notified(vim.log.levels.ERROR)
    assert.are.equal(1, #errors, vim.inspect(errors))
    assert.matches('no server binary found', errors[1].msg, 1, true)
    assert.is_nil(require('copilot_ls').last())
  end)

  it('reports a missing server binary once per action, with the fix, and starts nothing', function()
    H.load_plugin()
    H.capture_notify()
    vim.cmd.cd(vim.fn.fnameescape(H.workspace()))
    assert.is_false(require('copilot_ls').setup({ cmd = { '/nonexistent/copilot-ls' } }))
    vim.cmd.edit('src/main.rs')
    vim.cmd('CopilotAsk where is the port read?')
    local errors = H.notified(vim.log.levels.ERROR)
    assert.are.equal(2, #errors)
    for _, e in ipairs(errors) do
      assert.matches('/nonexistent/copilot-ls', e.msg, 1, true)
      assert.matches('not found', e.msg, 1, true)
      assert.matches('cmd', e.msg, 1, true)
      assert.matches('COPILOT_LS_PATH', e.msg, 1, true)
      assert.is_nil(e.msg:find('\n'))
    end
    assert.are.same({}, vim.lsp.get_clients())
    assert.is_nil(require('copilot_ls').last())
  end)

  it('says so when there is nothing to stop or show', function()
    H.load_plugin()
    H.capture_notify()
    vim.cmd('CopilotStop')
    vim.cmd('CopilotAnswer')
    assert.are.equal(0, #H.notified(vim.log.levels.ERROR))
    assert.are.equal(2, #H.notified(vim.log.levels.INFO))
  end)

  it('has help tags for every command and section', function()
    H.load_plugin()
    -- :helptags writes a tags file; build it in a copy to keep the checkout clean.
    local dir = vim.fn.tempname() .. '-help'
    vim.fn.mkdir(dir .. '/doc', 'p')
    vim.fn.writefile(vim.fn.readfile(H.plugin_dir .. '/doc/copilot_ls.txt'), dir .. '/doc/copilot_ls.txt')
    vim.cmd('helptags ' .. vim.fn.fnameescape(dir .. '/doc'))
    vim.opt.runtimepath:prepend(dir)
    local text = table.concat(vim.fn.readfile(dir .. '/doc/copilot_ls.txt'), '\n')
    local linked = {}
    for tag in text:gmatch('|([^|%s]+)|') do
      linked[tag] = true
    end
    for _, tag in ipairs({ 'copilot_ls', 'copilot_ls-thread', ':CopilotSend', 'copilot_ls.txt', ':CopilotAsk', ':CopilotFollowUp', ':CopilotStop', ':CopilotClear', ':CopilotAnswer', 'copilot_ls-setup', 'copilot_ls-health' }) do
      linked[tag] = true
    end
    for tag in pairs(linked) do
      local ok, err = pcall(vim.cmd.help, tag)
      assert(ok, ('help %s: %s'):format(tag, tostring(err)))
      vim.cmd('helpclose')
    end
    vim.cmd.help(':CopilotAsk')
    assert.matches('copilot_ls.txt$', vim.api.nvim_buf_get_name(0))
    assert.matches('%*:CopilotAsk%*', vim.api.nvim_get_current_line())
    vim.cmd('helpclose')
    -- :help copilot_ls opens the top of the file, not a section whose tag starts so.
    vim.cmd.help('copilot_ls')
    assert.matches('copilot_ls.txt$', vim.api.nvim_buf_get_name(0))
    assert.is_true(vim.api.nvim_win_get_cursor(0)[1] <= 2, vim.api.nvim_get_current_line())
    assert.matches('%*copilot_ls%*', vim.api.nvim_get_current_line())
  end)
end)

describe('errors', function()
  local errors, options
  before_each(function()
    H.load_plugin()
    errors = require('copilot_ls.errors')
    options = { provider = 'openai', apiKeyEnv = 'MY_KEY' }
  end)

  it('names the key variable for an authentication failure', function()
    local line = errors.format({ code = -32803, message = 'provider returned 401 Unauthorized:\n{"error": "bad key"}' }, options)
    assert.are.equal('copilot-ls: provider returned 401 Unauthorized: {"error": "bad key"} (fix: check the API key in $MY_KEY (or setup({ apiKeyEnv = ... })))', line)
  end)

  it('shortens a notification to the width, keeping the fix', function()
    local err = { code = -32803, message = 'provider returned 401 Unauthorized: ' .. ('x'):rep(200) }
    local line = errors.short(err, options, 100)
    assert.is_true(vim.fn.strdisplaywidth(line) <= 100, line)
    assert.matches('^copilot%-ls: provider returned 401 Unauthorized: x+… %(fix: check the API key in %$MY_KEY%)$', line)
    -- What fits stays whole.
    local fits = { code = -32803, message = 'provider returned 429' }
    assert.are.equal(errors.format(fits, options), errors.short(fits, options, 200))
  end)

  it('does not take a port for a status code', function()
    local line = errors.format({ code = -32803, message = 'cannot connect to http://127.0.0.1:40123/v1: connection refused' }, options)
    assert.matches('fix: check that the provider runs at baseUrl', line, 1, true)
  end)

  it('gives a fix for every kind of failure', function()
    local cases = {
      { 'provider returned 429 Too Many Requests', 'rate limiting' },
      { 'provider returned 404 Not Found', 'model and baseUrl' },
      { 'provider call timed out after 120 s', 'requestTimeoutSecs' },
      { 'provider returned 503 Service Unavailable', 'try again later' },
      { 'unusable reply', ':checkhealth copilot_ls' },
    }
    for _, case in ipairs(cases) do
      assert.matches(case[2], errors.format({ code = -32803, message = case[1] }, options), 1, true)
    end
    assert.matches('non-empty question', errors.format({ code = -32602, message = 'question is empty' }, options), 1, true)
  end)
end)

describe('answer', function()
  it('finds the path:line mention under the cursor', function()
    H.load_plugin()
    local answer = require('copilot_ls.answer')
    local line = 'See `src/config.rs:14` and src/rate_limit.rs:25-33 for step:3.'
    assert.are.same({ 'src/config.rs', 14 }, { answer.mention_at(line, 0) })
    assert.are.same({ 'src/rate_limit.rs', 25 }, { answer.mention_at(line, 30) })
    assert.are.same({ 'src/config.rs', 14 }, { answer.mention_at(line, #line - 2) })
    assert.are.same({}, { answer.mention_at('nothing here: 12', 3) })
  end)
end)

describe('selection', function()
  after_each(H.cleanup)

  it('converts a characterwise selection to the negotiated encoding', function()
    H.load_plugin()
    local ask = require('copilot_ls.ask')
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'let café = "😀 ok";', 'second line' })
    -- From the é to the emoji, inclusive.
    vim.api.nvim_win_set_cursor(0, { 1, 7 })
    vim.api.nvim_feedkeys(vim.keycode('v5l<Esc>'), 'nx', false)
    local selection = ask.capture_selection(0, 1, 1)
    assert.are.same({ start_row = 0, start_col = 7, end_row = 0, end_col = 17 }, selection)
    assert.are.same({ start = { line = 0, character = 7 }, ['end'] = { line = 0, character = 17 } }, ask.to_range(0, selection, 'utf-8'))
    assert.are.same({ start = { line = 0, character = 7 }, ['end'] = { line = 0, character = 14 } }, ask.to_range(0, selection, 'utf-16'))
    assert.are.same({ start = { line = 0, character = 7 }, ['end'] = { line = 0, character = 13 } }, ask.to_range(0, selection, 'utf-32'))
    -- A range that is not the visual selection covers whole lines.
    assert.are.same({ start_row = 0, start_col = 0, end_row = 1, end_col = 11 }, ask.capture_selection(0, 1, 2))
  end)
end)
