-- Defines the :Copilot* commands. Nothing here requires the plugin's modules: they load
-- when a command first runs, so an unused plugin costs nothing at startup.
if vim.g.loaded_copilot_ls then
  return
end
vim.g.loaded_copilot_ls = 1

if vim.fn.has('nvim-0.11') == 0 then
  -- Says what to do, once (setup() from the user's config may say it first).
  require('copilot_ls.compat').refuse()
  return
end

local function range_of(args)
  if args.range > 0 then
    return { args.line1, args.line2 }
  end
  return nil
end

local command = vim.api.nvim_create_user_command

command('CopilotAsk', function(args)
  require('copilot_ls').ask(args.args, { range = range_of(args) })
end, { nargs = '*', range = true, desc = 'Ask copilot-ls about the project' })

command('CopilotFollowUp', function(args)
  require('copilot_ls').follow_up(args.args, { range = range_of(args) })
end, { nargs = '*', range = true, desc = 'Ask copilot-ls a follow-up question' })

command('CopilotStop', function()
  require('copilot_ls').stop()
end, { nargs = 0, desc = 'Cancel the running copilot-ls question' })

command('CopilotClear', function()
  require('copilot_ls').clear()
end, { nargs = 0, desc = 'Forget the conversation and its diagnostics' })

command('CopilotSend', function()
  require('copilot_ls').send()
end, { nargs = 0, desc = 'Send the question typed at the bottom of the copilot-ls thread' })

command('CopilotAnswer', function()
  require('copilot_ls').show_answer()
end, { nargs = 0, desc = 'Show the last copilot-ls answer' })
