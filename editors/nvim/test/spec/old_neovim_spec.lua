-- A Neovim older than 0.11 (Debian 12's 0.7.2, which run.sh installs) gets one message
-- that says what to do, from plugin/ at startup, from setup() and the API, and from
-- :checkhealth, never a Lua traceback; and Neovim 0.10 (vim.uv, but no vim.lsp.config)
-- the same, with vim.fn.has and vim.version stubbed in this Neovim.
local H = require('helpers')
local L = require('layouts')

-- The old Neovim: run.sh installs Debian's (apt `neovim`) when it is absent.
local old_nvim = vim.env.NVIM_OLD_BIN or '/usr/bin/nvim'

--- Runs `script` (Lua) in the old Neovim with only the plugin on its runtimepath, as a
--- user's init.lua would, and returns what it wrote to its result file (JSON).
---@param script string
---@return table
local function in_old_neovim(script)
  local dir = L.tempdir('old-nvim')
  local result = dir .. '/result.json'
  vim.fn.writefile(vim.split(script, '\n'), dir .. '/init.lua')
  -- A clean environment: this Neovim's $VIMRUNTIME and $VIM are not the old one's.
  local env = {
    PATH = vim.env.PATH,
    HOME = dir,
    XDG_CONFIG_HOME = dir .. '/config',
    XDG_DATA_HOME = dir .. '/data',
    XDG_STATE_HOME = dir .. '/state',
    XDG_CACHE_HOME = dir .. '/cache',
    RESULT = result,
    PLUGIN = H.plugin_dir,
  }
  -- 0.7 has no `-l`: the script runs as the config (-u), then Neovim quits.
  local run = vim.system(
    { old_nvim, '--headless', '-i', 'NONE', '-u', dir .. '/init.lua', '+qa!' },
    { text = true, env = env, clear_env = true, cwd = dir }
  ):wait(30000)
  assert(
    vim.fn.filereadable(result) == 1,
    ('%s wrote no result (exit %s): %s%s'):format(old_nvim, run.code, run.stdout or '', run.stderr or '')
  )
  local decoded = vim.json.decode(table.concat(vim.fn.readfile(result), '\n'))
  decoded.stderr = run.stderr or ''
  return decoded
end

describe('a Neovim older than 0.11', function()
  after_each(H.cleanup)

  it("(Debian's 0.7.2) says what to do, once, and no traceback: setup(), the API, plugin/, :checkhealth", function()
    local version = vim.system({ old_nvim, '--version' }, { text = true }):wait()
    assert(version.code == 0, old_nvim .. ' does not run (run.sh installs Debian\'s neovim): ' .. (version.stderr or ''))
    local major, minor = (version.stdout or ''):match('NVIM v(%d+)%.(%d+)')
    assert(major and tonumber(major) == 0 and tonumber(minor) < 11, old_nvim .. ' is not older than 0.11: ' .. version.stdout)

    local got = in_old_neovim([[
local out = { notes = {}, errors = {} }
vim.notify = function(msg, level)
  table.insert(out.notes, { msg = msg, level = level })
end
vim.opt.runtimepath:prepend(vim.env.PLUGIN)
local function try(name, fn)
  local ok, err = pcall(fn)
  if not ok then
    table.insert(out.errors, name .. ': ' .. tostring(err))
  end
end
-- As a user's init.lua does, then Neovim sources plugin/.
try('setup', function()
  out.setup = require('copilot_ls').setup({ provider = 'openai' })
end)
try('plugin/', function()
  vim.cmd('runtime! plugin/copilot_ls.lua')
end)
try('ask', function()
  require('copilot_ls').ask('how are requests rate limited?')
end)
try('follow_up', function()
  require('copilot_ls').follow_up('and then?')
end)
try('stop', function()
  require('copilot_ls').stop()
end)
try('show_answer', function()
  require('copilot_ls').show_answer()
end)
try('last', function()
  out.last = require('copilot_ls').last() or false
end)
out.command = vim.fn.exists(':CopilotAsk')
try('checkhealth', function()
  vim.cmd('silent checkhealth copilot_ls')
  out.health = vim.api.nvim_buf_get_lines(0, 0, -1, false)
end)
out.version = vim.fn.execute('version')
local f = assert(io.open(vim.env.RESULT, 'w'))
f:write(vim.fn.json_encode(out))
f:close()
]])
    local report = vim.inspect(got)
    assert.are.same({}, got.errors, report)
    assert.is_false(got.setup, report)
    assert.is_false(got.last, report)
    assert.are.equal(0, got.command, 'no commands on an old Neovim: ' .. report)
    -- One message for all of it, saying what to do.
    assert.are.equal(1, #got.notes, report)
    local note = got.notes[1]
    assert.are.equal(vim.log.levels.ERROR, note.level)
    assert.matches('copilot-ls needs Neovim 0.11 or newer; this is 0.7.2.', note.msg, 1, true)
    assert.matches('Install Neovim 0.11 or newer: https://github.com/neovim/neovim/releases', note.msg, 1, true)
    assert.matches('copilot-ls ask', note.msg, 1, true)
    assert.is_nil(got.stderr:find('traceback', 1, true), got.stderr)

    local health = table.concat(got.health or {}, '\n')
    assert.matches('ERROR: Neovim 0.7.2: copilot-ls needs Neovim 0.11 or newer', health, 1, true)
    assert.matches('Install Neovim 0.11 or newer', health, 1, true)
    assert.is_nil(health:find('Failed to run healthcheck', 1, true), health)
    assert.is_nil(health:find('traceback', 1, true), health)
  end)

  it('(0.10, stubbed here) refuses in setup() and :checkhealth before anything else runs', function()
    H.load_plugin()
    H.capture_notify()
    local compat = require('copilot_ls.compat')
    local has, version = vim.fn.has, vim.version
    finally(function()
      vim.fn.has, vim.version = has, version
      compat.said = false
    end)
    compat.said = false
    vim.fn.has = function(feature)
      if feature == 'nvim-0.11' then
        return 0
      end
      return has(feature)
    end
    vim.version = setmetatable({}, {
      __index = version,
      __call = function()
        return { major = 0, minor = 10, patch = 4 }
      end,
    })
    local ok, why = require('copilot_ls').setup({ cmd = { H.server_bin }, provider = 'openai' })
    assert.is_false(ok)
    assert.are.equal('version', why)
    assert.is_false(vim.lsp.is_enabled('copilot_ls'), 'the server must not be enabled')
    -- Nothing of setup()'s reached vim.lsp.config().
    local lsp_config = vim.lsp.config['copilot_ls'] or {}
    assert.are_not.same({ H.server_bin }, lsp_config.cmd)
    assert.is_nil(vim.tbl_get(lsp_config, 'init_options', 'provider'))
    assert.is_nil(require('copilot_ls').ask('a question?'))
    local errors = H.notified(vim.log.levels.ERROR)
    assert.are.equal(1, #errors, vim.inspect(H.notifications))
    assert.matches('copilot-ls needs Neovim 0.11 or newer; this is 0.10.4.', errors[1].msg, 1, true)
    assert.matches('https://github.com/neovim/neovim/releases', errors[1].msg, 1, true)

    vim.cmd('silent checkhealth copilot_ls')
    local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
    vim.cmd('silent! tabclose')
    local report = table.concat(lines, '\n')
    assert.matches('ERROR Neovim 0.10.4: copilot-ls needs Neovim 0.11 or newer', report, 1, true)
    assert.matches('Install Neovim 0.11 or newer', report, 1, true)
    -- Nothing past the version: the other checks need the newer API.
    assert.is_nil(report:find('settings the plugin sends', 1, true), report)
    assert.is_nil(report:find(H.server_bin, 1, true), report)
  end)
end)
