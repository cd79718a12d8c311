// What scripts/test.ts reads of a `bun test --reporter=junit` report.

/** The failures a run's JUnit report holds, one block each: the file, the test, what it said. */
export function failuresOf(xml: string): string[] {
  const decode = (text: string) =>
    text
      .replace(/&#10;/g, '\n')
      .replace(/&quot;/g, '"')
      .replace(/&apos;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&')
  const attribute = (attrs: string, name: string) =>
    decode(attrs.match(new RegExp(`${name}="([^"]*)"`))?.[1] ?? '')
  const out: string[] = []
  // A timeout is a bare <failure type="TimeoutError" message="…"/>: its attributes are all it says.
  for (const m of xml.matchAll(
    /<testcase name="([^"]*)"[^>]*?file="([^"]*)"[^>]*?(?<!\/)>\s*<failure([^>]*?)(?:\/>|>([\s\S]*?)<\/failure>)/g,
  )) {
    const said =
      m[4] === undefined ? `${attribute(m[3]!, 'type')}: ${attribute(m[3]!, 'message')}` : decode(m[4])
    out.push(`${m[2]} > ${decode(m[1]!)}\n  ${said.split('\n').slice(0, 12).join('\n  ')}`)
  }
  return out
}
