-- Installing without building: the plugin finds the server from the unpacked release
-- archive, in the order of binary.lua; a lazy.nvim-style install from the repository
-- whose build step puts the server where the plugin looks. Each install runs in a fresh
-- child Neovim with only that plugin and an environment without copilot-ls on PATH.
local H = require('helpers')
local L = require('layouts')

-- Asks a question in the fixture workspace with whatever the child set up, waits for the
-- answer (no provider: the server answers with places), reports, stops the server.
local ask_and_report = [[
local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = msg, level = level })
end
vim.cmd.cd(vim.fn.fnameescape(vim.env.WORKSPACE))
vim.cmd.edit('src/rate_limit.rs')
vim.cmd('CopilotAsk how are tokens refilled?')
vim.wait(30000, function()
  local last = require('copilot_ls').last()
  return last and last.status ~= 'waiting'
end, 20)
local last = require('copilot_ls').last()
local client = vim.lsp.get_clients({ name = 'copilot_ls' })[1]
local found = require('copilot_ls.binary').find()
state.status = last and last.status
state.answer = last and last.result and last.result.answer
state.citations = last and last.result and #(last.result.citations or {})
state.cmd = client and client.config.cmd
state.found = found and { path = found.path, source = found.source }
state.notes = notes
report(state)
for _, c in ipairs(vim.lsp.get_clients()) do
  c:stop(true)
end
vim.wait(5000, function()
  return #vim.lsp.get_clients() == 0
end, 20)
os.exit(0)
]]

--- The environment of a child: no copilot-ls on PATH, none in ~/.cargo/bin, no
--- $COPILOT_LS_PATH, no provider (answers list places).
---@param extra? table<string, string>
---@return table<string, string>
local function child_env(extra)
  local home = L.tempdir('home')
  return vim.tbl_extend('force', {
    PATH = L.bare_path,
    HOME = home,
    CARGO_HOME = home .. '/.cargo',
    COPILOT_LS_PATH = '',
    COPILOT_LS_PROVIDER = 'none',
    WORKSPACE = H.workspace(),
  }, extra or {})
end

describe('installing from the release archive', function()
  it('finds the copilot-ls beside its nvim/ folder, with no setup(), and answers', function()
    local archive = L.release_archive()
    local env = child_env({ PLUGIN = archive.plugin })
    local report = L.child_nvim(
      [[
local state = {}
vim.opt.runtimepath:prepend(vim.env.PLUGIN)
vim.cmd('filetype on')
vim.cmd('runtime! plugin/copilot_ls.lua')
]] .. ask_and_report,
      env
    )
    assert.are.same({}, report.notes, report.output)
    assert.are.equal('done', report.status, report.output)
    assert.are.same({ archive.bin }, report.cmd)
    assert.are.same({ path = archive.bin, source = 'beside the plugin (release archive)' }, report.found)
    -- No model: the server lists the places it found.
    assert.is_truthy(report.answer and report.answer:find('src/rate_limit.rs', 1, true), report.answer)
    assert.is_true(report.citations > 0)
  end)

  it('finds it beside the real folder when the plugin is a symlink in a package', function()
    local archive = L.release_archive()
    local site = L.tempdir('site')
    local link = site .. '/pack/copilot/start/copilot_ls'
    vim.fn.mkdir(vim.fs.dirname(link), 'p')
    assert(vim.uv.fs_symlink(archive.plugin, link))
    local report = L.child_nvim(
      [[
vim.opt.packpath:prepend(vim.env.SITE)
vim.cmd('packloadall')
local found = require('copilot_ls.binary').find()
report({ found = found and { path = found.path, source = found.source } })
os.exit(0)
]],
      child_env({ SITE = site })
    )
    assert.are.same({ path = archive.bin, source = 'beside the plugin (release archive)' }, report.found)
  end)
end)

describe('the order of the lookup', function()
  local binary, saved, layout

  before_each(function()
    H.load_plugin()
    binary = require('copilot_ls.binary')
    saved = {
      plugin_dir = binary.plugin_dir,
      PATH = vim.env.PATH,
      CARGO_HOME = vim.env.CARGO_HOME,
      COPILOT_LS_PATH = vim.env.COPILOT_LS_PATH,
    }
    -- Every place holds a binary; each test takes them away from the top.
    local root = L.tempdir('order')
    local function fake(path)
      return L.fake_server(path, 'copilot-ls 0.4.0 (fake)')
    end
    layout = {
      setup = fake(root .. '/chosen/copilot-ls'),
      env = fake(root .. '/env/copilot-ls'),
      archive = fake(root .. '/repo/editors/copilot-ls'),
      build = fake(root .. '/repo/target/release/copilot-ls'),
      path = fake(root .. '/bin/copilot-ls'),
      cargo = fake(root .. '/cargo/bin/copilot-ls'),
    }
    vim.fn.mkdir(root .. '/repo/editors/nvim', 'p')
    binary.plugin_dir = root .. '/repo/editors/nvim'
    vim.env.PATH = root .. '/bin:' .. L.bare_path
    vim.env.CARGO_HOME = root .. '/cargo'
    vim.env.COPILOT_LS_PATH = layout.env
  end)

  after_each(function()
    binary.plugin_dir = saved.plugin_dir
    vim.env.PATH = saved.PATH
    vim.env.CARGO_HOME = saved.CARGO_HOME
    vim.env.COPILOT_LS_PATH = saved.COPILOT_LS_PATH
    H.cleanup()
  end)

  ---@param options table
  ---@return string? path
  ---@return string? source
  local function lookup(options)
    local found = binary.find(options)
    if found then
      return found.cmd[1], found.source
    end
  end

  it('takes each place before the ones after it', function()
    local expected = {
      { layout.setup, 'setup({ cmd })' },
      { layout.env, '$COPILOT_LS_PATH' },
      { layout.archive, 'beside the plugin (release archive)' },
      { layout.build, 'the repository build (target/release)' },
      { layout.path, 'PATH' },
      { layout.cargo, 'cargo install (' .. vim.env.CARGO_HOME .. '/bin)' },
    }
    assert.are.same(expected[1], { lookup({ cmd = { layout.setup } }) })
    assert.are.same(expected[2], { lookup({}) })
    vim.env.COPILOT_LS_PATH = ''
    assert.are.same(expected[3], { lookup({}) })
    os.remove(layout.archive)
    assert.are.same(expected[4], { lookup({}) })
    os.remove(layout.build)
    assert.are.same(expected[5], { lookup({}) })
    os.remove(layout.path)
    assert.are.same(expected[6], { lookup({}) })
    os.remove(layout.cargo)
    assert.is_nil(binary.find({}))
  end)

  it('passes what it found to the server command and setup()', function()
    vim.env.COPILOT_LS_PATH = nil
    local config = require('copilot_ls.config')
    require('copilot_ls').setup({ enable = false })
    assert.are.same({ layout.archive }, config.cmd())
    assert.are.same({ layout.archive }, vim.lsp.config.copilot_ls.cmd)
    assert.are.equal('beside the plugin (release archive)', config.cmd_source())
    -- A setup() cmd keeps its arguments.
    require('copilot_ls').setup({ enable = false, cmd = { layout.setup, 'serve' } })
    assert.are.same({ layout.setup, 'serve' }, vim.lsp.config.copilot_ls.cmd)
  end)

  it('never replaces a binary the user named with one found further down', function()
    assert.are.same({ '/nonexistent/copilot-ls', 'setup({ cmd })' }, { lookup({ cmd = { '/nonexistent/copilot-ls' } }) })
    vim.env.COPILOT_LS_PATH = '/nonexistent/env/copilot-ls'
    local found = binary.find({})
    assert.are.same({ '/nonexistent/env/copilot-ls' }, found.cmd)
    local line = binary.problem(found)
    assert.matches('"/nonexistent/env/copilot-ls" not found (from $COPILOT_LS_PATH)', line, 1, true)
  end)

  it('says where it looked and what to do when no place has one, in one line', function()
    vim.env.COPILOT_LS_PATH = nil
    for _, path in pairs(layout) do
      os.remove(path)
    end
    H.capture_notify()
    assert.is_false(require('copilot_ls').setup({}))
    local errors = H.notified(vim.log.levels.ERROR)
    assert.are.equal(1, #errors, vim.inspect(H.notifications))
    local line = errors[1].msg
    assert.is_nil(line:find('\n'), line)
    assert.matches('^copilot%-ls: no server binary found %(looked in setup%({ cmd }%), %$COPILOT_LS_PATH, ', line)
    for _, place in ipairs({ layout.archive, layout.build, 'PATH', layout.cargo }) do
      assert.matches(place, line, 1, true)
    end
    assert.matches('release archive', line, 1, true)
    assert.matches('`cargo build --release`', line, 1, true)
    assert.matches('setup({ cmd = {', line, 1, true)
    assert.are.same({}, vim.lsp.get_clients())
  end)
end)

describe('a lazy.nvim-style install from the repository', function()
  it("runs the README's spec: its build step builds the server, and the plugin finds it", function()
    local clone = L.clone_repository()
    -- Stands in for cargo, which would take minutes: what `cargo build --release` leaves
    -- behind in the repository is target/release/copilot-ls. It records how it was run.
    local tools = L.tempdir('tools')
    L.script(
      tools .. '/cargo',
      ([[
echo "$PWD|$*" >>%q
[ "$*" = "build --release" ] && [ -f Cargo.toml ] || { echo "unexpected: cargo $*" >&2; exit 2; }
mkdir -p target/release
ln -f %q target/release/copilot-ls 2>/dev/null || cp %q target/release/copilot-ls]]):format(
        tools .. '/cargo.log',
        H.server_bin,
        H.server_bin
      )
    )
    local env = child_env({ PATH = tools .. ':' .. L.bare_path, CLONE = clone, README = H.plugin_dir .. '/README.md' })
    local report = L.child_nvim(
      [[
local state = {}
-- The spec of the README (the lua block after its marker), with `dir` standing in for
-- the repository's URL.
local readme = table.concat(vim.fn.readfile(vim.env.README), '\n')
local after_marker = readme:match('evaluated by test/spec/install_spec%.lua.-\n(.*)')
local block = assert(after_marker and after_marker:match('^```lua\n(.-)\n```'), 'no spec after the marker')
local spec = assert(loadstring('return ' .. block))()
assert(spec.url, 'the spec names the repository by url')
spec.url, spec.dir = nil, vim.env.CLONE
-- What lazy.nvim does on install: the plugin's dir on the runtimepath, each build step
-- (a string is a shell command run in that dir, a function gets the plugin), then
-- config with opts when the plugin loads.
local plugin = { dir = spec.dir, name = spec.name }
vim.opt.runtimepath:append(plugin.dir)
package.path = plugin.dir .. '/editors/nvim/lua/?.lua;' .. package.path
state.before = require('copilot_ls.binary').find() or vim.NIL
state.build = {}
for _, step in ipairs(type(spec.build) == 'table' and spec.build or { spec.build }) do
  if type(step) == 'function' then
    step(plugin)
  else
    assert(not step:match('^:') and not step:match('%.lua$'), 'a shell command: ' .. step)
    local done
    vim.system({ vim.env.SHELL or vim.o.shell, '-c', step }, { cwd = plugin.dir, text = true }, function(result)
      done = result
    end)
    vim.wait(60000, function()
      return done
    end, 20)
    table.insert(state.build, { step = step, code = done and done.code, stderr = done and done.stderr })
  end
end
vim.cmd('filetype on')
spec.config(plugin, spec.opts or {})
state.helptags = vim.fn.filereadable(plugin.dir .. '/editors/nvim/doc/tags') == 1
]] .. ask_and_report,
      env
    )
    assert.are.equal(vim.NIL, report.before, 'nothing to find before the build')
    assert.are.equal(1, #report.build, vim.inspect(report.build))
    assert.are.equal('cargo build --release', report.build[1].step)
    assert.are.equal(0, report.build[1].code, report.build[1].stderr)
    assert.is_true(report.helptags, 'the build step generates the help tags')
    local calls = vim.fn.readfile(tools .. '/cargo.log')
    assert.are.same({ clone .. '|build --release' }, calls)
    local built = clone .. '/target/release/copilot-ls'
    assert.are.same({ path = built, source = 'the repository build (target/release)' }, report.found)
    assert.are.same({}, report.notes, report.output)
    assert.are.equal('done', report.status, report.output)
    assert.are.same({ built }, report.cmd)
    assert.is_true(report.citations > 0, report.output)
  end)
end)
