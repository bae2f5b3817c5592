-- The plugin's API: setup() and what the :Copilot* commands call.
local compat = require('copilot_ls.compat')
local config = require('copilot_ls.config')

local M = {}

-- The plugin's version: the server it is made for. :checkhealth warns when the server's
-- `copilot-ls --version` says another. Released together (the archive's nvim/ folder).
M.version = '0.4.0'

local did_setup = false

local function notify_error(message)
  vim.notify(message, vim.log.levels.ERROR)
end

--- Configures and (unless `enable = false`) starts the server for every buffer.
--- Optional: the first command calls it with the defaults. A bad option is reported
--- (one line each, with a "did you mean" for a misspelt name) and changes nothing; the
--- good ones still apply.
---@param opts? table see :help copilot_ls-setup
---@return boolean ok false when something was reported
---@return string? why 'version' (this Neovim is too old), 'cmd' (no server binary)
function M.setup(opts)
  -- First: on an older Neovim what follows fails with a Lua traceback.
  if not compat.supported() then
    return compat.refuse(), 'version'
  end
  opts = opts or {}
  if type(opts) ~= 'table' then
    notify_error('copilot-ls: setup() takes a table of options (see :help copilot_ls-setup)')
    opts = {}
  end
  local valid, problems = config.check(opts)
  -- Kept for :checkhealth, which shows what the last setup() refused.
  config.problems = problems
  for _, problem in ipairs(problems) do
    notify_error('copilot-ls: setup(): ' .. problem .. ' (see :help copilot_ls-setup)')
  end
  local options = config.merge(valid)
  did_setup = true
  -- A plugin manager that puts a subfolder on 'runtimepath' only when the plugin loads
  -- (lazy.nvim with the repository: editors/nvim) sources nothing in its plugin/: the
  -- commands are defined here then.
  if not vim.g.loaded_copilot_ls then
    vim.cmd.runtime('plugin/copilot_ls.lua')
  end
  vim.lsp.config(config.server_name, config.lsp_config(options))

  -- A running server gets the new settings now (PROTOCOL.md section 2: later wins).
  for _, client in ipairs(vim.lsp.get_clients({ name = config.server_name })) do
    client.settings = { [config.settings_section] = config.server_settings(options) }
    client:notify('workspace/didChangeConfiguration', { settings = client.settings })
  end

  if not options.enable then
    return #problems == 0
  end
  local client = require('copilot_ls.client')
  local ok, cmd_err = client.check_cmd(config.cmd(options))
  if not ok then
    -- Enabling anyway would make Neovim warn on every buffer opened.
    notify_error(cmd_err)
    return false, 'cmd'
  end
  vim.lsp.enable(config.server_name)
  -- vim.lsp.enable() starts on FileType; a file with no filetype never fires it, yet the
  -- server should see it too.
  local group = vim.api.nvim_create_augroup('copilot_ls.attach', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
    group = group,
    callback = function(ev)
      vim.schedule(function()
        if
          vim.api.nvim_buf_is_valid(ev.buf)
          and vim.bo[ev.buf].filetype == ''
          and client.is_file_buffer(ev.buf)
          and vim.lsp.is_enabled(config.server_name)
        then
          client.get(ev.buf)
        end
      end)
    end,
  })
  return #problems == 0
end

--- Runs setup({}) when nobody has. False when that found no server binary, or this
--- Neovim is too old: it said so already, and the command would only say it again.
---@return boolean
local function ensure_setup()
  if not compat.supported() then
    return compat.refuse()
  end
  if did_setup then
    return true
  end
  local _, why = M.setup({})
  return why ~= 'cmd' and why ~= 'version'
end

---@param question? string
---@param opts copilot_ls.AskOpts
local function ask_or_prompt(question, opts)
  if not ensure_setup() then
    return nil
  end
  if question and vim.trim(question) ~= '' then
    return require('copilot_ls.ask').send(vim.trim(question), opts)
  end
  -- Capture the buffer now: the prompt may change what is current.
  opts.bufnr = opts.bufnr or vim.api.nvim_get_current_buf()
  vim.ui.input({ prompt = opts.follow_up and 'copilot-ls follow-up: ' or 'Ask copilot-ls: ' }, function(input)
    if input and vim.trim(input) ~= '' then
      require('copilot_ls.ask').send(vim.trim(input), opts)
    end
  end)
end

--- Asks a question in a new conversation; prompts when `question` is empty.
---@param question? string
---@param opts? copilot_ls.AskOpts `range = {line1, line2}` sends that selection
function M.ask(question, opts)
  opts = vim.deepcopy(opts or {})
  opts.follow_up = false
  return ask_or_prompt(question, opts)
end

--- Asks in the same conversation as the last question.
---@param question? string
---@param opts? copilot_ls.AskOpts
function M.follow_up(question, opts)
  opts = vim.deepcopy(opts or {})
  opts.follow_up = true
  return ask_or_prompt(question, opts)
end

--- Cancels the running question.
function M.stop()
  if not compat.supported() then
    return compat.refuse()
  end
  return require('copilot_ls.ask').stop()
end

--- Forgets the conversation and removes the server's citation diagnostics.
function M.clear()
  if not ensure_setup() then
    return
  end
  return require('copilot_ls.ask').clear()
end

--- Sends the question typed at the bottom of the thread (:CopilotSend, <CR> there).
---@return copilot_ls.Ask?
function M.send()
  if not compat.supported() then
    return compat.refuse()
  end
  return require('copilot_ls.answer').submit()
end

--- Shows the last answer again.
function M.show_answer()
  if not compat.supported() then
    return compat.refuse()
  end
  local last = require('copilot_ls.ask').last
  if not require('copilot_ls.answer').reopen(last) then
    vim.notify('copilot-ls: no answer yet; ask with :CopilotAsk', vim.log.levels.INFO)
  end
end

--- The last ask (running or finished), for statuslines and scripts; nil before the first.
---@return copilot_ls.Ask?
function M.last()
  if not compat.supported() then
    return nil
  end
  return require('copilot_ls.ask').last
end

return M
