-- Runs busted inside Neovim's LuaJIT (nvim --headless -u NONE -l runner.lua [busted args]),
-- with Debian's lua-busted found in the system Lua 5.1 paths.
local test_dir = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
package.path = table.concat({
  test_dir .. '/?.lua',
  '/usr/share/lua/5.1/?.lua',
  '/usr/share/lua/5.1/?/init.lua',
  package.path,
}, ';')
-- C modules of busted's dependencies (lua-term, lua-system) live under the multiarch dir.
for _, dir in ipairs(vim.fn.glob('/usr/lib/*/lua/5.1', false, true)) do
  package.cpath = dir .. '/?.so;' .. package.cpath
end
-- busted's exit() raises an error instead of exiting when it thinks it was not started
-- from the command line; in Neovim that prints a bare E5113. Exit with the code instead.
require('busted.compatibility').exit = function(code)
  io.stdout:flush()
  os.exit(code == 0 and 0 or 1)
end
require('busted.runner')({ standalone = false })
