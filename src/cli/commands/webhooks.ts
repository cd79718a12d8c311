import { type Command, Option } from 'commander'
import { act, collect, commandGroup, examples, listCommand, paged, pageQuery } from '../command'
import { CliError, EXIT } from '../exit-codes'
import type { Column } from '../output'

interface Webhook {
  id: string
  url: string
  events: string[]
  status: string
  enabled: boolean
}

interface Delivery {
  id: string
  event_type: string
  status: string
  attempts: number
  last_status_code: number | null
  last_error: string | null
  next_attempt_at: string | null
}

const COLUMNS: Column<Webhook>[] = [
  ['ID', (w) => w.id],
  ['URL', (w) => w.url],
  ['STATUS', (w) => w.status],
  ['EVENTS', (w) => w.events],
]

const DELIVERY_COLUMNS: Column<Delivery>[] = [
  ['ID', (d) => d.id],
  ['EVENT', (d) => d.event_type],
  ['STATUS', (d) => d.status],
  ['ATTEMPTS', (d) => d.attempts],
  ['LAST', (d) => d.last_status_code ?? d.last_error],
  ['NEXT_ATTEMPT', (d) => d.next_attempt_at],
]

/** `webhooks list|create|deliveries|redeliver`: signed events sent to a workspace's endpoints. */
export function registerWebhooks(program: Command): void {
  const group = commandGroup(
    program,
    'webhooks',
    "A workspace's webhook endpoints and their deliveries",
    'gatehouse webhooks list -w Acme',
  )

  listCommand(group, 'List the endpoints (never their secrets)', '/webhooks', COLUMNS)

  examples(
    group
      .command('create')
      .description('Add an endpoint; its signing secret is shown this once')
      .argument('<url>', 'https (private addresses are refused)')
      .option('--event <type>', 'an event type to send, e.g. user.created (repeat, or commas)', collect)
      .option('--description <text>')
      .action(
        act(async (ctx, opts, url) => {
          if (!opts.event?.length) throw new CliError('create needs --event <type>', EXIT.USAGE)
          const body = {
            url,
            events: opts.event,
            ...(opts.description ? { description: opts.description } : {}),
          }
          ctx.out.record(await ctx.api().post(await ctx.workspacePath('/webhooks'), body))
          if (!ctx.out.json) ctx.out.note('The signing secret is shown this once: keep it now.')
        }),
      ),
    'gatehouse webhooks create https://hooks.example.com/gatehouse --event user.created,user.deleted -w Acme',
  )

  examples(
    paged(
      group
        .command('deliveries')
        .description("An endpoint's deliveries, newest first")
        .argument('<webhook_id>')
        .addOption(
          new Option('--status <status>', 'only these').choices([
            'queued',
            'retrying',
            'delivered',
            'failed_permanent',
          ]),
        ),
      'deliveries',
    ).action(
      act(async (ctx, opts, webhookId) => {
        const path = await ctx.workspacePath(
          `/webhooks/${webhookId}/deliveries?${pageQuery(opts, { status: opts.status })}`,
        )
        ctx.out.page(
          await ctx.api().get<{ items: Delivery[]; next_cursor: string | null }>(path),
          DELIVERY_COLUMNS,
          'No deliveries.',
        )
      }),
    ),
    'gatehouse webhooks deliveries wh_01J… --status failed_permanent',
  )

  examples(
    group
      .command('redeliver')
      .description('Send a delivery again, with a fresh retry schedule')
      .argument('<webhook_id>')
      .argument('<delivery_id>')
      .action(
        act(async (ctx, _opts, webhookId, deliveryId) => {
          const path = await ctx.workspacePath(`/webhooks/${webhookId}/deliveries/${deliveryId}/redeliver`)
          ctx.out.record(await ctx.api().post(path))
        }),
      ),
    'gatehouse webhooks redeliver wh_01J… dlv_01J…',
  )
}
