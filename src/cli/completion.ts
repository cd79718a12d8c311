import type { Command } from 'commander'

/** One command of the tree: its path (`workspaces:create`), its subcommands and its options. */
interface Node {
  path: string
  subcommands: { name: string; description: string }[]
  options: string[]
}

/** Walks the program: every command with what may follow it (the root's options hold everywhere). */
function nodes(program: Command): Node[] {
  const longFlags = (command: Command) => command.options.flatMap((o) => (o.long ? [o.long] : []))
  const global = longFlags(program).filter((f) => f !== '--version')
  const walk = (command: Command, path: string): Node[] => {
    const node: Node = {
      path,
      subcommands: command.commands.map((c) => ({ name: c.name(), description: c.description() })),
      options: [...new Set([...longFlags(command), ...global, '--help'])],
    }
    return [node, ...command.commands.flatMap((c) => walk(c, path ? `${path}:${c.name()}` : c.name()))]
  }
  return walk(program, '')
}

/** Options whose values are a fixed list (`--type web|spa|native`), by flag. */
function choices(program: Command): Map<string, string[]> {
  const found = new Map<string, string[]>()
  const walk = (command: Command) => {
    for (const o of command.options) if (o.long && o.argChoices) found.set(o.long, o.argChoices)
    command.commands.forEach(walk)
  }
  walk(program)
  return found
}

const known = (all: Node[]) =>
  all
    .map((n) => n.path)
    .filter(Boolean)
    .join('|')

/** The words after the program name that name commands, joined by `:` into `cmd` (shared by both shells). */
const walkWords = (all: Node[], words: string, from: string, to: string) => `  local cmd="" word i
  for ((i = ${from}; i < ${to}; i++)); do
    word="\${${words}[i]}"
    case "$word" in -*) continue ;; esac
    case "\${cmd:+$cmd:}$word" in
      ${known(all)}) cmd="\${cmd:+$cmd:}$word" ;;
    esac
  done`

/** A bash completion script for the program (`complete -F`), generated from its command tree. */
export function bashCompletion(program: Command): string {
  const all = nodes(program)
  const name = program.name()
  const values = [...choices(program)].map(([flag, list]) => `    ${flag}) words="${list.join(' ')}" ;;`)
  const words = all.map(
    (n) => `    "${n.path}") words="${[...n.subcommands.map((s) => s.name), ...n.options].join(' ')}" ;;`,
  )
  return `# bash completion for ${name}: eval "$(${name} completion bash)" in ~/.bashrc
_${name}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" words=""
${walkWords(all, 'COMP_WORDS', '1', 'COMP_CWORD')}
  case "$prev" in
${values.join('\n')}
  esac
  if [[ -z "$words" ]]; then
    case "$cmd" in
${words.join('\n')}
    esac
  fi
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -F _${name} ${name}
`
}

/** zsh's quoting of a `name:description` entry for _describe. */
const zshEntry = (name: string, description: string) =>
  `'${`${name}:${description.replace(/:/g, '\\:')}`.replace(/'/g, `'\\''`)}'`

/** A zsh completion script (`compdef`, or a `_name` file on $fpath), generated from the command tree. */
export function zshCompletion(program: Command): string {
  const all = nodes(program)
  const name = program.name()
  const values = [...choices(program)].map(
    ([flag, list]) => `    ${flag}) compadd -- ${list.join(' ')}; return ;;`,
  )
  const cases = all.map(
    (n) =>
      `    "${n.path}") subcommands=(${n.subcommands.map((s) => zshEntry(s.name, s.description)).join(' ')}); flags=(${n.options.join(' ')}) ;;`,
  )
  return `#compdef ${name}
# zsh completion for ${name}: eval "$(${name} completion zsh)" in ~/.zshrc (after compinit)
_${name}() {
${walkWords(all, 'words', '2', 'CURRENT')}
  case "\${words[CURRENT-1]}" in
${values.join('\n')}
  esac
  # Not "options": zsh's own parameter of that name holds the shell's options.
  local -a subcommands flags
  case "$cmd" in
${cases.join('\n')}
  esac
  if [[ "\${words[CURRENT]}" == -* ]]; then
    compadd -- $flags
  else
    _describe -t commands '${name} command' subcommands
  fi
}
if [[ "\${funcstack[1]}" == "_${name}" ]]; then
  _${name} "$@"
else
  compdef _${name} ${name}
fi
`
}
