-- Several roots, end to end against the real copilot-ls and the scripted fake provider:
-- one client serves the buffers of every project as its workspace folders (PROTOCOL.md
-- section 10), `vim.lsp.buf.add_workspace_folder()` and `remove_workspace_folder()`
-- change what the server reads, and an answer's `<root name>/<path>` citations, quickfix
-- items, `path:line` mentions and suggested edits land in that root's file, not in the
-- same path of another root.
local H = require('helpers')

--- Three projects side by side, copies of the fixture, each a git root (its `.git`), so a
--- buffer's root is its project whatever the cwd. The server names them by their
--- directory: alpha, beta, gamma. Line 1 of src/config.rs and src/rate_limit.rs says
--- which project it is, so a tool's result shows which file the server read.
---@return table<string, string> name -> directory
local function projects()
  local parent = vim.fn.tempname() .. '-roots'
  vim.fn.mkdir(parent, 'p')
  parent = vim.fs.normalize(vim.uv.fs_realpath(parent))
  local dirs = {}
  for _, name in ipairs({ 'alpha', 'beta', 'gamma' }) do
    local dir = parent .. '/' .. name
    local result = vim.system({ 'cp', '-R', H.fixture, dir }):wait()
    assert(result.code == 0, 'copying the fixture failed: ' .. (result.stderr or ''))
    vim.fn.mkdir(dir .. '/.git', 'p')
    for file, first in pairs({
      ['src/config.rs'] = ('//! Configuration of %s, loaded from the environment.'):format(name),
      ['src/rate_limit.rs'] = ('//! Token-bucket rate limiting of %s.'):format(name),
    }) do
      local lines = vim.fn.readfile(dir .. '/' .. file)
      lines[1] = first
      vim.fn.writefile(lines, dir .. '/' .. file)
    end
    dirs[name] = dir
  end
  assert(
    not vim.fs.root(parent, '.git'),
    parent .. ' is inside a git repository; set TMPDIR elsewhere'
  )
  return dirs
end

---@param dir string
---@return lsp.WorkspaceFolder
local function folder(dir)
  return { name = dir, uri = vim.uri_from_fname(dir) }
end

---@param client vim.lsp.Client
---@param n integer
local function wait_folders(client, n)
  H.wait(H.timeout, function()
    return #(client.workspace_folders or {}) == n
  end, ('%d workspace folders (have %s)'):format(n, vim.inspect(client.workspace_folders)))
end

--- setup(), the cwd in alpha, then alpha's src/rate_limit.rs and beta's `beta_file`
--- opened (in that order, the second in a split): one client, both roots its folders.
--- The cursor ends in alpha's window.
---@param steps? table[] the provider's script
---@param beta_file? string default src/rate_limit.rs
local function session(steps, beta_file)
  H.load_plugin()
  local dirs = projects()
  vim.cmd.cd(vim.fn.fnameescape(dirs.alpha))
  local provider = steps and H.fake_provider(steps)
  assert(require('copilot_ls').setup(H.setup_options(provider)), vim.inspect(H.notifications))
  vim.cmd.edit(vim.fn.fnameescape(dirs.alpha .. '/src/rate_limit.rs'))
  local alpha_buf, alpha_win = vim.api.nvim_get_current_buf(), vim.api.nvim_get_current_win()
  local client = H.wait_client(alpha_buf)
  vim.cmd.split(vim.fn.fnameescape(dirs.beta .. '/' .. (beta_file or 'src/rate_limit.rs')))
  local beta_buf = vim.api.nvim_get_current_buf()
  H.wait_client(beta_buf)
  wait_folders(client, 2)
  vim.api.nvim_set_current_win(alpha_win)
  return {
    dirs = dirs,
    provider = provider,
    client = client,
    alpha_buf = alpha_buf,
    alpha_win = alpha_win,
    beta_buf = beta_buf,
  }
end

--- The text of the tool results the provider's request `n` carried (the model's view).
---@param provider FakeProvider
---@param n integer
---@return string
local function tool_results(provider, n)
  local request = assert(provider.requests()[n], 'no provider request ' .. n)
  local texts = {}
  for _, message in ipairs(request.body.messages) do
    if message.role == 'tool' then
      local content = message.content
      table.insert(texts, type(content) == 'string' and content or vim.json.encode(content))
    end
  end
  return table.concat(texts, '\n')
end

--- Puts the cursor on `text` in the thread, shown again if a jump closed it.
---@param text string
local function cursor_to(text)
  local answer = require('copilot_ls.answer')
  if not answer.is_open() then
    vim.cmd('CopilotAnswer')
  end
  vim.api.nvim_set_current_win(answer.winid)
  local row = H.row_of(text)
  local line = vim.api.nvim_buf_get_lines(answer.bufnr, row - 1, row, false)[1]
  vim.api.nvim_win_set_cursor(0, { row, line:find(text, 1, true) - 1 })
end

describe('several roots', function()
  before_each(function()
    H.load_plugin()
    H.capture_notify()
  end)
  after_each(H.cleanup)

  it('serves the buffers of two projects from one client, both its workspace folders', function()
    local s = session({
      { tool_calls = { H.tool_call('call_1', 'list_directory', { path = '' }) } },
      H.answer_turn('Two projects.'),
    })
    local clients = vim.lsp.get_clients({ name = 'copilot_ls' })
    assert.are.equal(1, #clients)
    assert.are.equal(s.client.id, H.wait_client(s.beta_buf).id)
    assert.are.same({ folder(s.dirs.alpha), folder(s.dirs.beta) }, s.client.workspace_folders)
    -- Neovim's own listing, from either buffer.
    assert.are.same({ s.dirs.alpha, s.dirs.beta }, vim.lsp.buf.list_workspace_folders())

    -- Another file of a root the client has adds nothing.
    vim.cmd.edit(vim.fn.fnameescape(s.dirs.beta .. '/src/config.rs'))
    assert.are.equal(s.client.id, H.wait_client(vim.api.nvim_get_current_buf()).id)
    vim.cmd.buffer(s.alpha_buf)
    assert.are.same({ folder(s.dirs.alpha), folder(s.dirs.beta) }, s.client.workspace_folders)

    -- The server has both: listing the workspace lists the roots by name.
    vim.cmd('CopilotAsk which projects are there?')
    local ask = H.wait_ask()
    assert.are.equal('done', ask.status, ask.error)
    local listing = tool_results(s.provider, 2)
    assert.matches('alpha', listing, 1, true)
    assert.matches('beta', listing, 1, true)
    assert.are.same({ s.dirs.alpha, s.dirs.beta }, ask.roots)
    assert.are.equal(1, #vim.lsp.get_clients({ name = 'copilot_ls' }))
    H.assert_no_errors()
  end)

  it('puts citations of the second root in the quickfix list and jumps to its file', function()
    local s = session({
      {
        tool_calls = {
          H.tool_call(
            'call_1',
            'read_file',
            { path = 'beta/src/rate_limit.rs', start_line = 1, end_line = 12 }
          ),
        },
      },
      H.answer_turn(
        'The bucket is beta/src/rate_limit.rs:7; its settings are read in beta/src/config.rs:12.',
        { { path = 'beta/src/rate_limit.rs', line = 7, end_line = 12, note = 'the bucket' } }
      ),
    })
    local alpha_file = s.dirs.alpha .. '/src/rate_limit.rs'
    local beta_file = s.dirs.beta .. '/src/rate_limit.rs'
    -- Asked from alpha's buffer, about beta's file of the same name.
    vim.cmd('CopilotAsk what is the bucket in beta?')
    local ask = H.wait_ask()
    assert.are.equal('done', ask.status, ask.error)
    local read = tool_results(s.provider, 2)
    assert.matches('rate limiting of beta', read, 1, true)
    assert.is_nil(read:find('of alpha', 1, true), read)

    local citation = ask.result.citations[1]
    assert.are.equal('beta/src/rate_limit.rs', citation.path)
    assert.are.equal(vim.uri_from_fname(beta_file), citation.uri)
    assert.matches('- beta/src/rate_limit.rs:7-12 — the bucket', H.thread_text(), 1, true)
    -- The server's diagnostic is on beta's buffer, none on alpha's.
    H.wait(H.timeout, function()
      return #H.diagnostics(s.beta_buf, 'citation') == 1
    end, "the citation diagnostic in beta's buffer")
    assert.are.same({}, H.diagnostics(s.alpha_buf, 'citation'))

    local qf = vim.fn.getqflist()
    assert.are.equal(1, #qf)
    assert.are.equal(beta_file, vim.api.nvim_buf_get_name(qf[1].bufnr))
    assert.are.equal(7, qf[1].lnum)
    H.screen('multi-root-citation')

    -- <CR> on the citation: beta's buffer, in the window asked from.
    cursor_to('- beta/src/rate_limit.rs:7-12')
    H.press('<CR>')
    assert.are.equal(s.alpha_win, vim.api.nvim_get_current_win())
    assert.are.equal(s.beta_buf, vim.api.nvim_get_current_buf())
    assert.are.equal(7, vim.api.nvim_win_get_cursor(0)[1])

    -- A mention of a file nobody cited goes to that root too (not alpha's config.rs).
    vim.api.nvim_win_set_buf(s.alpha_win, s.alpha_buf)
    cursor_to('beta/src/config.rs:12')
    H.press('<CR>')
    assert.are.equal(s.dirs.beta .. '/src/config.rs', vim.api.nvim_buf_get_name(0))
    assert.are.equal(12, vim.api.nvim_win_get_cursor(0)[1])

    -- The quickfix list goes there as well.
    vim.api.nvim_win_set_buf(s.alpha_win, s.alpha_buf)
    vim.cmd('silent cfirst')
    assert.are.equal(beta_file, vim.api.nvim_buf_get_name(0))
    assert.are.equal(7, vim.api.nvim_win_get_cursor(0)[1])
    assert.are.equal(alpha_file, vim.api.nvim_buf_get_name(s.alpha_buf))
    assert.are.equal(1, #vim.lsp.get_clients({ name = 'copilot_ls' }))
    H.assert_no_errors()
  end)

  it("applies a suggested edit to the second root's file, not the first's", function()
    local s = session({
      {
        tool_calls = {
          H.tool_call('call_1', 'propose_edit', {
            path = 'beta/src/config.rs',
            old_text = 'read("TOLLBOOTH_BURST", 10)',
            new_text = 'read("TOLLBOOTH_BURST", 20)',
            title = 'Raise the default burst',
          }),
        },
      },
      H.answer_turn('Raise the burst of beta.', { { path = 'beta/src/config.rs', line = 15 } }),
    })
    local beta_config = s.dirs.beta .. '/src/config.rs'
    vim.cmd('CopilotAsk how do I allow bigger bursts in beta?')
    local ask = H.wait_ask()
    assert.are.equal('done', ask.status, ask.error)
    local edit = ask.result.edits[1]
    assert.are.equal('beta/src/config.rs', edit.path)
    assert.are.equal(vim.uri_from_fname(beta_config), edit.uri)
    -- beta's src/config.rs is not open: the server's hint comes on a buffer Neovim adds.
    H.wait(H.timeout, function()
      local buf = vim.fn.bufnr(beta_config)
      return buf > 0 and #H.diagnostics(buf, 'suggested-edit') == 1
    end, "the suggested-edit diagnostic in beta's src/config.rs")
    H.wait(H.timeout, function()
      return H.thread_text():find('```diff', 1, true)
    end, 'the diff in the thread')
    assert.matches('- Raise the default burst — beta/src/config.rs:15', H.thread_text(), 1, true)
    assert.matches('+            burst: read("TOLLBOOTH_BURST", 20),', H.thread_text(), 1, true)

    cursor_to('```diff')
    H.press('ga')
    local beta_buf = vim.fn.bufnr(beta_config)
    H.wait(H.timeout, function()
      local line = vim.api.nvim_buf_get_lines(beta_buf, 14, 15, false)[1] or ''
      return line:find('TOLLBOOTH_BURST", 20', 1, true)
    end, "the edit to apply to beta's src/config.rs")
    H.wait(H.timeout, function()
      return H.thread_text():find('— _applied_', 1, true)
    end, 'the thread to say applied')
    -- alpha's file of the same name is untouched, on disk and in no buffer.
    local alpha_config = s.dirs.alpha .. '/src/config.rs'
    local alpha_text = table.concat(vim.fn.readfile(alpha_config), '\n')
    assert.matches('TOLLBOOTH_BURST", 10', alpha_text, 1, true)
    assert.are.equal(-1, vim.fn.bufnr(alpha_config))
    -- The buffer the edit loaded joined the client without adding a folder.
    assert.is_true(vim.lsp.buf_is_attached(beta_buf, s.client.id))
    assert.are.same({ folder(s.dirs.alpha), folder(s.dirs.beta) }, s.client.workspace_folders)
    H.screen('multi-root-edit-applied')
    H.assert_no_errors()
  end)

  it('reads a folder added with vim.lsp.buf.add_workspace_folder() until it is removed', function()
    local s = session({
      -- First question: gamma, once added.
      { tool_calls = { H.tool_call('call_1', 'read_file', { path = 'gamma/src/config.rs' }) } },
      H.answer_turn('The port is read in gamma/src/config.rs:14.', {
        { path = 'gamma/src/config.rs', line = 14, note = 'the port' },
      }),
      -- Second question: gamma again, once removed.
      { tool_calls = { H.tool_call('call_2', 'read_file', { path = 'gamma/src/config.rs' }) } },
      H.answer_turn('gamma is gone.'),
    })
    local gamma_config = s.dirs.gamma .. '/src/config.rs'
    -- From alpha's buffer, as a user would: the clients attached to it get the folder.
    vim.lsp.buf.add_workspace_folder(s.dirs.gamma)
    assert.are.same(
      { folder(s.dirs.alpha), folder(s.dirs.beta), folder(s.dirs.gamma) },
      s.client.workspace_folders
    )

    vim.cmd('CopilotAsk where is the port read in gamma?')
    local ask = H.wait_ask()
    assert.are.equal('done', ask.status, ask.error)
    assert.matches('Configuration of gamma', tool_results(s.provider, 2), 1, true)
    local citation = ask.result.citations[1]
    assert.are.equal('gamma/src/config.rs', citation.path)
    assert.are.equal(vim.uri_from_fname(gamma_config), citation.uri)
    assert.is_not_false(citation.verified)
    local qf = vim.fn.getqflist()
    assert.are.equal(gamma_config, vim.api.nvim_buf_get_name(qf[1].bufnr))
    -- The quickfix list opens gamma's file (not loaded before), which attaches to the
    -- same client and adds no folder twice.
    vim.api.nvim_set_current_win(s.alpha_win)
    vim.cmd('silent cfirst')
    assert.are.equal(gamma_config, vim.api.nvim_buf_get_name(0))
    assert.are.equal(14, vim.api.nvim_win_get_cursor(0)[1])
    local gamma_buf = vim.api.nvim_get_current_buf()
    assert.are.equal(s.client.id, H.wait_client(gamma_buf).id)
    assert.are.equal(3, #s.client.workspace_folders)
    assert.are.equal(1, #vim.lsp.get_clients({ name = 'copilot_ls' }))

    H.wait(H.timeout, function()
      return #H.diagnostics(gamma_buf, 'citation') == 1
    end, "gamma's citation diagnostic")

    -- Removed (from alpha's buffer): the server withdraws what it showed there (the
    -- citation's diagnostic) and no longer reads it.
    vim.api.nvim_win_set_buf(s.alpha_win, s.alpha_buf)
    vim.lsp.buf.remove_workspace_folder(s.dirs.gamma)
    assert.are.same({ folder(s.dirs.alpha), folder(s.dirs.beta) }, s.client.workspace_folders)
    H.wait(H.timeout, function()
      return #H.diagnostics(gamma_buf, 'citation') == 0
    end, "gamma's citation diagnostic to go")
    vim.cmd('CopilotAsk and now?')
    ask = H.wait_ask()
    assert.are.equal('done', ask.status, ask.error)
    local refused = tool_results(s.provider, 4)
    assert.matches('Error', refused, 1, true)
    assert.is_nil(refused:find('Configuration of gamma', 1, true), refused)
    H.assert_no_errors()
  end)

  it('shares one client between projects opened before the server started', function()
    local dirs = projects()
    vim.cmd.cd(vim.fn.fnameescape(dirs.alpha))
    -- As `nvim alpha/src/config.rs beta/src/config.rs` with the plugin set up at startup.
    vim.cmd.edit(vim.fn.fnameescape(dirs.alpha .. '/src/config.rs'))
    local alpha_buf = vim.api.nvim_get_current_buf()
    vim.cmd.split(vim.fn.fnameescape(dirs.beta .. '/src/config.rs'))
    local beta_buf = vim.api.nvim_get_current_buf()
    local provider = H.fake_provider({
      { tool_calls = { H.tool_call('call_1', 'list_directory', { path = '' }) } },
      H.answer_turn('The burst is read in beta/src/config.rs:15.', {
        { path = 'beta/src/config.rs', line = 15, note = 'the burst' },
      }),
    })
    assert(require('copilot_ls').setup(H.setup_options(provider)))
    local client = H.wait_client(alpha_buf)
    assert.are.equal(client.id, H.wait_client(beta_buf).id)
    wait_folders(client, 2)
    assert.are.same({ folder(dirs.alpha), folder(dirs.beta) }, client.workspace_folders)
    assert.are.equal(1, #vim.lsp.get_clients({ name = 'copilot_ls', _uninitialized = true }))

    -- The server has both roots, and cites beta's file by its root's name. (A folder
    -- that came while the first index refresh was still running was once left out of
    -- the index the no-model answers search: the server's unit test
    -- `a_caller_from_before_the_roots_changed_leaves_the_sessions_index_alone` holds
    -- that fix; here the roots are checked through the model's tools.)
    vim.cmd('CopilotAsk where is the burst read?')
    local ask = H.wait_ask()
    assert.are.equal('done', ask.status, ask.error)
    local listing = tool_results(provider, 2)
    assert.matches('alpha', listing, 1, true)
    assert.matches('beta', listing, 1, true)
    local citation = ask.result.citations[1]
    assert.are.equal('beta/src/config.rs', citation.path)
    assert.are.equal(vim.uri_from_fname(dirs.beta .. '/src/config.rs'), citation.uri)
    H.assert_no_errors()
  end)

  it('keeps one client per root with a server that cannot take new folders', function()
    -- An in-process stand-in for a copilot-ls from before several roots: it answers
    -- `initialize` without workspace folder support and records what it is sent.
    local servers = {}
    local function old_server(dispatchers)
      local server = { sent = {}, closing = false }
      table.insert(servers, server)
      local id = 0
      local function stop(code)
        if not server.closing then
          server.closing = true
          vim.schedule(function()
            dispatchers.on_exit(code, 0)
          end)
        end
      end
      return {
        request = function(method, params, callback)
          id = id + 1
          table.insert(server.sent, { method = method, params = params })
          local result = vim.NIL
          if method == 'initialize' then
            result = {
              capabilities = { textDocumentSync = 1 },
              serverInfo = { name = 'copilot-ls', version = '0.3.0' },
            }
          end
          vim.schedule(function()
            callback(nil, result)
          end)
          return true, id
        end,
        notify = function(method, params)
          table.insert(server.sent, { method = method, params = params })
          if method == 'exit' then
            stop(0)
          end
          return true
        end,
        is_closing = function()
          return server.closing
        end,
        terminate = function()
          stop(15)
        end,
      }
    end
    local dirs = projects()
    vim.cmd.cd(vim.fn.fnameescape(dirs.alpha))
    assert(require('copilot_ls').setup(H.setup_options(nil, { provider = 'none' })))
    vim.lsp.config('copilot_ls', { cmd = old_server })
    vim.cmd.edit(vim.fn.fnameescape(dirs.alpha .. '/src/config.rs'))
    local alpha = H.wait_client(vim.api.nvim_get_current_buf())
    vim.cmd.edit(vim.fn.fnameescape(dirs.beta .. '/src/config.rs'))
    local beta = H.wait_client(vim.api.nvim_get_current_buf())
    assert.are_not.equal(alpha.id, beta.id)
    assert.are.same({ folder(dirs.alpha) }, alpha.workspace_folders)
    assert.are.same({ folder(dirs.beta) }, beta.workspace_folders)
    -- Another file of alpha goes to alpha's client.
    vim.cmd.edit(vim.fn.fnameescape(dirs.alpha .. '/src/main.rs'))
    assert.are.equal(alpha.id, H.wait_client(vim.api.nvim_get_current_buf()).id)
    assert.are.equal(2, #servers)
    for _, server in ipairs(servers) do
      for _, message in ipairs(server.sent) do
        assert.are_not.equal('workspace/didChangeWorkspaceFolders', message.method)
      end
    end
    H.assert_no_errors()
  end)
end)

describe('root names', function()
  before_each(H.load_plugin)

  it('are the folders as the server names them: twins by their parent, then a number', function()
    local roots = require('copilot_ls.roots')
    local function names(dirs)
      return vim.tbl_map(function(root)
        return root.name
      end, roots.named(dirs))
    end
    assert.are.same({ 'api', 'web' }, names({ '/n/a/api', '/n/b/web' }))
    assert.are.same({ 'a-src', 'b-src' }, names({ '/n/a/src', '/n/b/src' }))
    assert.are.same({ 'x-src', 'x-src-2' }, names({ '/n/a/x/src', '/n/b/x/src' }))
    -- A folder inside another is not a root of its own; one given twice counts once.
    assert.are.same({ 'a' }, names({ '/n/a', '/n/a/sub', '/n/a' }))

    assert.are.same(
      { '/n/b/src/lib.rs', '/n/a/src/b-src/lib.rs', '/n/b/src/b-src/lib.rs' },
      roots.files_of('b-src/lib.rs', { '/n/a/src', '/n/b/src' })
    )
    -- One root: its paths carry no name.
    assert.are.same({ '/n/a/src/lib.rs' }, roots.files_of('src/lib.rs', { '/n/a' }))
    assert.are.same({ '/abs/x.rs' }, roots.files_of('/abs/x.rs', { '/n/a', '/n/b' }))
  end)
end)
