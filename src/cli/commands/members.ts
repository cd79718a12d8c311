import { type Command, Option } from 'commander'
import { act, commandGroup, examples, listCommand } from '../command'
import { CliError, EXIT } from '../exit-codes'
import type { Column } from '../output'

interface Member {
  account_id: string | null
  invitation_id: string | null
  email: string
  name: string
  role: string
  status: string
  expires_at: string | null
}

const COLUMNS: Column<Member>[] = [
  ['ID', (m) => m.account_id ?? m.invitation_id],
  ['EMAIL', (m) => m.email],
  ['NAME', (m) => m.name],
  ['ROLE', (m) => m.role],
  ['STATUS', (m) => (m.expires_at ? `${m.status} until ${m.expires_at}` : m.status)],
]

/** `members list|add|remove`: who may administer a workspace, and their roles. */
export function registerMembers(program: Command): void {
  const group = commandGroup(
    program,
    'members',
    "A workspace's members (platform accounts) and invitations",
    'gatehouse members list -w Acme',
  )

  listCommand(group, 'List members, then pending invitations', '/members', COLUMNS)

  examples(
    group
      .command('add')
      .description('Add a member: an existing account at once, any other address by an invitation mail')
      .argument('<email>')
      .addOption(
        new Option('--role <role>', 'what they may do')
          .choices(['owner', 'admin', 'developer', 'viewer'])
          .makeOptionMandatory(),
      )
      .action(
        act(async (ctx, opts, email) => {
          const added = await ctx
            .api()
            .post<Member>(await ctx.workspacePath('/members'), { email, role: opts.role })
          ctx.out.record({ ...added })
        }),
      ),
    'gatehouse members add dev@example.com --role developer -w Acme',
  )

  examples(
    group
      .command('remove')
      .description('Remove a member (or cancel an invitation) by account id, invitation id or email')
      .argument('<member>', 'an account id, an invitation id (inv_…) or an email address')
      .action(
        act(async (ctx, _opts, member) => {
          const base = await ctx.workspacePath('/members')
          let path = member.startsWith('inv_') ? `${base}/invitations/${member}` : `${base}/${member}`
          if (member.includes('@')) {
            const { items } = await ctx.api().get<{ items: Member[] }>(base)
            const found = items.find((m) => m.email.toLowerCase() === member.toLowerCase())
            if (!found) throw new CliError(`${member} is neither a member nor invited`, EXIT.NOT_FOUND)
            path = found.account_id
              ? `${base}/${found.account_id}`
              : `${base}/invitations/${found.invitation_id}`
          }
          const answer = await ctx.api().delete(path)
          ctx.out.result(answer, () => `Removed ${member}`)
        }),
      ),
    'gatehouse members remove dev@example.com -w Acme',
  )
}
