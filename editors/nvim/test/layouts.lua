-- Install layouts for the specs, built from this checkout: the release archive's folder
-- (copilot-ls beside nvim/, as scripts/package.sh lays it out), a clone of the repository
-- standing in for a plugin manager's, fake executables, and a fresh child Neovim to run a
-- script in with an environment of the spec's choosing.
local H = require('helpers')

local L = {}

-- What the archive's nvim/ folder holds: editors/nvim without test/ (nor doc/tags, which
-- :helptags writes).
L.plugin_parts = { 'lua', 'plugin', 'lsp', 'doc/copilot_ls.txt', 'README.md' }

---@param cmd string[]
---@param opts? table vim.system options
local function run(cmd, opts)
  local result = vim.system(cmd, vim.tbl_extend('force', { text = true }, opts or {})):wait()
  assert(result.code == 0, ('%s failed: %s'):format(table.concat(cmd, ' '), result.stderr or ''))
  return result
end

--- A fresh directory, symlinks resolved (so paths compare with what the plugin reports).
---@param suffix string
---@return string
function L.tempdir(suffix)
  local dir = vim.fn.tempname() .. '-' .. suffix
  vim.fn.mkdir(dir, 'p')
  return vim.fs.normalize(assert(vim.uv.fs_realpath(dir)))
end

--- Copies the plugin's files (as the archive ships them) into `dest`.
---@param dest string
function L.copy_plugin(dest)
  for _, part in ipairs(L.plugin_parts) do
    -- Into the parent folder: over an existing copy (a clone's), cp merges.
    local parent = vim.fs.dirname(dest .. '/' .. part)
    vim.fn.mkdir(parent, 'p')
    run({ 'cp', '-R', H.plugin_dir .. '/' .. part, parent .. '/' })
  end
end

--- Puts `source` at `dest` as a file of its own: a hard link (the server is hundreds of
--- MB in a debug build), a copy across file systems.
---@param source string
---@param dest string
function L.place_binary(source, dest)
  vim.fn.mkdir(vim.fs.dirname(dest), 'p')
  local linked = vim.system({ 'ln', '-f', source, dest }):wait()
  if linked.code ~= 0 then
    run({ 'cp', source, dest })
  end
end

--- The unpacked release archive: <dir>/pkg/nvim (the plugin) and <dir>/pkg/copilot-ls.
---@return {pkg: string, plugin: string, bin: string}
function L.release_archive()
  local pkg = L.tempdir('archive') .. '/pkg'
  L.copy_plugin(pkg .. '/nvim')
  L.place_binary(H.server_bin, pkg .. '/copilot-ls')
  return { pkg = pkg, plugin = pkg .. '/nvim', bin = pkg .. '/copilot-ls' }
end

--- A clone of this repository, as a plugin manager makes one from its URL, with this
--- checkout's editors/nvim copied over it so uncommitted changes to the plugin are
--- what runs. Without git history (a source tarball) the clone is Cargo.toml and the
--- plugin, all that the build step and the plugin use.
---@return string dir
function L.clone_repository()
  local dir = L.tempdir('clone') .. '/copilot-ls'
  local is_git = vim.system({ 'git', '-C', H.repo, 'rev-parse', '--git-dir' }):wait().code == 0
  if is_git then
    run({ 'git', 'clone', '--quiet', H.repo, dir })
  else
    vim.fn.mkdir(dir, 'p')
    run({ 'cp', H.repo .. '/Cargo.toml', dir .. '/Cargo.toml' })
  end
  L.copy_plugin(dir .. '/editors/nvim')
  assert(
    vim.fn.filereadable(dir .. '/target/release/copilot-ls') == 0,
    'the clone must start without a build'
  )
  return dir
end

--- An executable shell script at `path`.
---@param path string
---@param body string the script after its #! line
---@return string path
function L.script(path, body)
  vim.fn.mkdir(vim.fs.dirname(path), 'p')
  vim.fn.writefile(vim.split('#!/bin/sh\n' .. body, '\n'), path)
  vim.uv.fs_chmod(path, tonumber('755', 8))
  return path
end

--- A stand-in server binary: prints `version` for --version and `doctor_json` (when
--- given) for `doctor`, else fails as a server without the subcommand does.
---@param path string
---@param version string the whole --version line
---@param doctor_json? string
---@return string path
function L.fake_server(path, version, doctor_json)
  local doctor = doctor_json
      and ("cat <<'EOF'\n" .. doctor_json .. '\nEOF\n    exit 0')
    or "echo \"error: unrecognized subcommand 'doctor'\" >&2; exit 2"
  return L.script(
    path,
    ([[
case "$1" in
  --version) echo %q ;;
  doctor)
    echo "$*" >>"$0.calls"
    env | grep -E '^(COPILOT_LS_|OPENAI_API_KEY|ANTHROPIC_API_KEY)' >>"$0.env"
    %s ;;
  *) exit 2 ;;
esac]]):format(version, doctor)
  )
end

-- A PATH with the shell tools the children need and no copilot-ls on it.
L.bare_path = '/usr/local/bin:/usr/bin:/bin'

--- Runs `script` (Lua source) in a fresh headless Neovim (`-u NONE`, nothing of this
--- one's runtimepath) with `env` on top of this environment, and waits for it. The
--- script reports through `report(table)`, which writes JSON to the result file, and
--- should end with `os.exit()`. Returns the report, or fails with the child's output.
---@param script string
---@param env table<string, string>
---@param timeout_ms? integer
---@return table report
function L.child_nvim(script, env, timeout_ms)
  local dir = L.tempdir('child')
  local result_file = dir .. '/result.json'
  local prelude = ([[
local function report(value)
  vim.fn.writefile({ vim.json.encode(value) }, %q)
end
]]):format(result_file)
  vim.fn.writefile(vim.split(prelude .. script, '\n'), dir .. '/script.lua')
  local done
  vim.system(
    { vim.v.progpath, '--headless', '-u', 'NONE', '-i', 'NONE', '-l', dir .. '/script.lua' },
    { text = true, env = env, cwd = dir, stdin = false },
    function(result)
      done = result
    end
  )
  H.wait(timeout_ms or 60000, function()
    return done
  end, 'the child Neovim to exit')
  local output = ('exit code %d\nstdout: %s\nstderr: %s'):format(done.code, done.stdout or '', done.stderr or '')
  assert(vim.fn.filereadable(result_file) == 1, 'the child Neovim reported nothing: ' .. output)
  local report = vim.json.decode(table.concat(vim.fn.readfile(result_file), '\n'))
  report.output = output
  return report
end

return L
