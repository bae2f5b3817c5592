-- Defaults for vim.lsp.config('copilot_ls'). Neovim merges this file under whatever the
-- user (or require('copilot_ls').setup()) passes to vim.lsp.config(), so a user who
-- prefers plain `vim.lsp.enable('copilot_ls')` gets a working server too.
local config = require('copilot_ls.config')

---@type vim.lsp.Config
return {
  cmd = config.cmd(),
  -- No `filetypes`: the server answers about the whole project and reads the editor's
  -- text of every open buffer, whatever its language.
  root_dir = function(bufnr, on_dir)
    on_dir(config.root_dir(bufnr))
  end,
  -- Empty dicts, not {}: merged with the user's options they stay JSON objects.
  init_options = vim.empty_dict(),
  settings = { copilot = vim.empty_dict() },
}
