-- The editor's roots as the server's workspace folders (PROTOCOL.md section 10, "Several
-- roots"): one copilot_ls client serves every project the buffers are in. A buffer under
-- a root the running client lacks joins it as a workspace folder rather than starting a
-- second server, and `vim.lsp.buf.add_workspace_folder()` / `remove_workspace_folder()`
-- change the same list. Also the other way: a `<root name>/<path>` the server showed, as
-- a file again.
local config = require('copilot_ls.config')

local M = {}

--- Whether path is dir or lies under it (both absolute and normalized).
---@param path string
---@param dir string
---@return boolean
local function under(path, dir)
  if dir == '/' then
    return true
  end
  return path == dir or vim.startswith(path, dir .. '/')
end

--- The client's workspace folders as directories, in its order. Neovim names each folder
--- by its path, but the URI is what the server reads.
---@param client vim.lsp.Client
---@return string[]
function M.dirs(client)
  local dirs = {}
  for _, folder in ipairs(client.workspace_folders or {}) do
    table.insert(dirs, vim.fs.normalize(vim.uri_to_fname(folder.uri)))
  end
  return dirs
end

--- Whether the server takes folders added and removed while it runs
--- (`workspace/didChangeWorkspaceFolders`). A copilot-ls from before several roots does
--- not say so; it sees only the folder it started with.
---@param client vim.lsp.Client
---@return boolean
function M.takes_folders(client)
  local workspace = client.server_capabilities and client.server_capabilities.workspace
  local folders = type(workspace) == 'table' and workspace.workspaceFolders
  if type(folders) ~= 'table' or not folders.supported then
    return false
  end
  -- `true`, or the id of a registration to come (LSP 3.6).
  return folders.changeNotifications == true or type(folders.changeNotifications) == 'string'
end

--- `reuse_client` for vim.lsp.start() (lsp/copilot_ls.lua, client.lua): any running
--- copilot_ls client serves a buffer of any root; the root joins it when the buffer
--- attaches (below). Neovim's default would reuse a client only for the roots it already
--- has, so every project would start a server of its own. A server known not to take new
--- folders keeps one client per root, as before several roots. One still starting is
--- reused: its capabilities are not known yet, and a second server for every buffer
--- opened meanwhile (`nvim a/x b/y`) would be the waste this avoids.
---@param client vim.lsp.Client
---@param cfg vim.lsp.ClientConfig the config vim.lsp.start() was given, root_dir resolved
---@return boolean
function M.reuse(client, cfg)
  if client.name ~= cfg.name or client:is_stopped() then
    return false
  end
  if not client.initialized or M.takes_folders(client) or type(cfg.root_dir) ~= 'string' then
    return true
  end
  local root = vim.fs.normalize(cfg.root_dir)
  return vim.iter(M.dirs(client)):any(function(dir)
    return under(root, dir)
  end)
end

--- Makes the root of bufnr (attached to client) one of the client's workspace folders,
--- unless a folder already holds the buffer's file or its root. A file outside every
--- project (its root the cwd, already a folder) adds nothing: the server reads its text
--- as an open document all the same.
---@param client vim.lsp.Client
---@param bufnr integer
function M.add_buffer_root(client, bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or vim.bo[bufnr].buftype ~= '' or not M.takes_folders(client) then
    return
  end
  local file = vim.fs.normalize(vim.fn.fnamemodify(name, ':p'))
  local root = vim.fs.normalize(config.root_dir(bufnr))
  for _, dir in ipairs(M.dirs(client)) do
    if under(file, dir) or under(root, dir) then
      return
    end
  end
  -- Neovim's own (what vim.lsp.buf.add_workspace_folder() calls): it sends
  -- didChangeWorkspaceFolders and keeps client.workspace_folders, named by the path, so
  -- vim.lsp.buf.remove_workspace_folder(root) finds it.
  client:_add_workspace_folder(root)
end

--- Adds a buffer's root as it attaches. An autocmd rather than the config's on_attach:
--- a user's own on_attach in vim.lsp.config('copilot_ls') would replace that one. It
--- fires once the client is initialized (Neovim attaches a buffer opened while the server
--- starts once it has answered), so the server's capabilities are known and the folder
--- is never announced before `initialized`.
function M.follow_buffers()
  local group = vim.api.nvim_create_augroup('copilot_ls.roots', { clear = true })
  vim.api.nvim_create_autocmd('LspAttach', {
    group = group,
    callback = function(ev)
      local client = ev.data and vim.lsp.get_client_by_id(ev.data.client_id)
      if client and client.name == config.server_name then
        M.add_buffer_root(client, ev.buf)
      end
    end,
  })
end

--- The roots as the server names them: the folder's directory name, two of one name told
--- apart as `<parent>-<name>`, then by a number in order; a folder inside another is not
--- a root of its own (server/src/workspace/roots.rs `named`). Real paths: the server
--- names a root by where a link leads.
---@param dirs string[]
---@return {name: string, dir: string}[]
function M.named(dirs)
  local real = vim.tbl_map(function(dir)
    return vim.fs.normalize(vim.uv.fs_realpath(dir) or dir)
  end, dirs)
  local kept = {}
  for _, dir in ipairs(real) do
    local inside = vim.iter(real):any(function(other)
      return other ~= dir and under(dir, other)
    end)
    if not inside and not vim.tbl_contains(kept, dir) then
      table.insert(kept, dir)
    end
  end
  local function base(dir)
    local name = vim.fs.basename(dir)
    return name ~= '' and name or 'root'
  end
  local names = {}
  for i, dir in ipairs(kept) do
    local twins = #vim.tbl_filter(function(other)
      return base(other) == base(dir)
    end, kept)
    local parent = vim.fs.basename(vim.fs.dirname(dir))
    names[i] = (twins > 1 and parent ~= '') and (parent .. '-' .. base(dir)) or base(dir)
  end
  for i = 1, #names do
    local first, n = names[i], 2
    while vim.tbl_contains(vim.list_slice(names, 1, i - 1), names[i]) do
      names[i] = ('%s-%d'):format(first, n)
      n = n + 1
    end
  end
  local out = {}
  for i, dir in ipairs(kept) do
    table.insert(out, { name = names[i], dir = dir })
  end
  return out
end

--- The files a path shown by the server may be, best first: with several roots
--- `<root name>/<path>` in that root, then (a path the model wrote without its root's
--- name, or with one root) the path in each root. An absolute path is itself.
---@param path string
---@param dirs string[] the roots the server had when it showed the path
---@return string[]
function M.files_of(path, dirs)
  if path:sub(1, 1) == '/' then
    return { path }
  end
  local files = {}
  if #dirs > 1 then
    local head, rest = path:match('^([^/]+)/(.+)$')
    for _, root in ipairs(head and M.named(dirs) or {}) do
      if root.name == head then
        table.insert(files, vim.fs.joinpath(root.dir, rest))
      end
    end
  end
  for _, dir in ipairs(dirs) do
    table.insert(files, vim.fs.joinpath(dir, path))
  end
  return files
end

return M
