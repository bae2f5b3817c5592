-- Defaults for vim.lsp.config('copilot_ls'). Neovim merges this file under whatever the
-- user (or require('copilot_ls').setup()) passes to vim.lsp.config(), so a user who
-- prefers plain `vim.lsp.enable('copilot_ls')` gets a working server too.
local config = require('copilot_ls.config')
local roots = require('copilot_ls.roots')

-- One server for all the editor's projects: a buffer under a root the running client
-- lacks adds it as a workspace folder when it attaches (roots.lua).
roots.follow_buffers()

---@type vim.lsp.Config
return {
  cmd = config.cmd(),
  -- Only warnings and errors on stderr: Neovim logs all of it at ERROR level.
  cmd_env = config.cmd_env(),
  -- No `filetypes`: the server answers about the whole project and reads the editor's
  -- text of every open buffer, whatever its language.
  root_dir = function(bufnr, on_dir)
    -- Not calling on_dir keeps the server off a buffer. An unnamed buffer (the [No Name]
    -- of a fresh Neovim) has no document to show the server, and once attached the
    -- client would stay on it when the user then :edits a file of another project.
    if vim.api.nvim_buf_get_name(bufnr) == '' then
      return
    end
    on_dir(config.root_dir(bufnr))
  end,
  -- Any running copilot_ls client takes a buffer of another root (roots.lua); Neovim's
  -- default would start a server per root.
  reuse_client = roots.reuse,
  -- Neovim applies documentChanges, checking each document's version, but does not say
  -- so; without it the server falls back to plain `changes`, and a suggestion computed
  -- for older text could land on newer text. Merged over Neovim's own capabilities.
  capabilities = { workspace = { workspaceEdit = { documentChanges = true } } },
  handlers = {
    -- The answer streams as `$/progress` on the ask's partialResultToken (AskDelta,
    -- PROTOCOL.md section 3): those go to the thread, not into vim.lsp.status(); the
    -- work-done progress goes on to Neovim's own handler.
    ['$/progress'] = function(err, params, ctx)
      local ask = package.loaded['copilot_ls.ask']
      if ask and ask.on_partial(params) then
        return
      end
      -- The server titles an ask's progress `Copilot` (PROTOCOL.md section 3); in
      -- vim.lsp.status() that reads like GitHub Copilot's, so it shows the product's name.
      local value = type(params) == 'table' and params.value
      if type(value) == 'table' and value.kind == 'begin' and value.title == 'Copilot' then
        params = vim.deepcopy(params)
        params.value.title = 'copilot-ls'
      end
      return vim.lsp.handlers['$/progress'](err, params, ctx)
    end,
  },
  -- Empty dicts, not {}: merged with the user's options they stay JSON objects.
  init_options = vim.empty_dict(),
  settings = { [config.settings_section] = vim.empty_dict() },
}
