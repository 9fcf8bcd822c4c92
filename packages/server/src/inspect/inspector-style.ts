/** The inspector's stylesheet, served as `/inspect/inspector.css`: system fonts only, light and dark, 320 px and up. */
export const inspectorStyle = `
:root { color-scheme: light dark; --bg: #f7f7f5; --fg: #1d1d1b; --muted: #6b6b66; --line: #dcdcd6; --panel: #ffffff;
  --accent: #2f6fdb; --accent-soft: #dce8fb; --warn: #b25e00; --bad: #b3261e; --good: #2e7d32; --full: #9a9a92; }
@media (prefers-color-scheme: dark) { :root { --bg: #161615; --fg: #ecece8; --muted: #a0a09a; --line: #34342f; --panel: #1f1f1d;
  --accent: #7aa7f5; --accent-soft: #24344f; --warn: #f0a24a; --bad: #f28b82; --good: #81c995; --full: #77776f; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
a { color: var(--accent); }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
.top { display: flex; flex-wrap: wrap; gap: 8px 20px; align-items: center; padding: 10px 20px; background: var(--panel); border-bottom: 1px solid var(--line); position: sticky; top: 0; z-index: 1; }
.brand { font-weight: 700; text-decoration: none; color: var(--fg); }
.brand span { color: var(--muted); font-weight: 400; }
nav { display: flex; gap: 4px; flex-wrap: wrap; }
nav a { padding: 4px 10px; border-radius: 6px; text-decoration: none; }
nav a[aria-current="page"] { background: var(--accent-soft); font-weight: 600; }
#forget-key { margin-left: auto; }
main, .panel { max-width: 1200px; margin: 0 auto; padding: 16px 20px 48px; }
.panel { margin-top: 24px; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; max-width: 480px; }
h1 { font-size: 22px; margin: 8px 0 4px; word-break: break-word; }
h2 { font-size: 17px; margin: 28px 0 8px; }
h3 { font-size: 15px; margin: 16px 0 6px; }
.sub { color: var(--muted); margin: 0 0 12px; }
.hint { color: var(--muted); font-size: 13px; }
.crumbs { font-size: 13px; color: var(--muted); margin-top: 4px; }
.views { display: flex; flex-wrap: wrap; gap: 6px; margin: 10px 0 4px; }
.views a { padding: 4px 10px; border: 1px solid var(--line); border-radius: 999px; text-decoration: none; background: var(--panel); }
.views a[aria-current="page"] { background: var(--accent-soft); border-color: var(--accent); font-weight: 600; }
.stats { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 8px; margin: 12px 0; }
.stat { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 8px 12px; }
.stat b { display: block; font-size: 18px; }
.stat span { color: var(--muted); font-size: 12px; }
.table-wrap { overflow-x: auto; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; }
/* A table wider than its box shows a shadow at the side that has more: the panel-coloured covers scroll with the content, the shadows stay. */
.table-wrap { background: linear-gradient(to right, var(--panel) 30%, transparent) left / 40px 100% no-repeat local, linear-gradient(to left, var(--panel) 30%, transparent) right / 40px 100% no-repeat local,
  radial-gradient(farthest-side at 0 50%, rgba(0,0,0,.25), transparent) left / 14px 100% no-repeat scroll, radial-gradient(farthest-side at 100% 50%, rgba(0,0,0,.25), transparent) right / 14px 100% no-repeat scroll, var(--panel); }
.narrow-only { display: none; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: 12px; text-transform: uppercase; letter-spacing: .03em; color: var(--muted); font-weight: 600; white-space: nowrap; }
tr:last-child td { border-bottom: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.content { white-space: pre-wrap; word-break: break-word; min-width: 240px; }
tr.focus td { background: var(--accent-soft); }
tr.watermark td { background: transparent; color: var(--warn); font-weight: 600; font-size: 13px; border-top: 2px dashed var(--warn); border-bottom: 2px dashed var(--warn); }
.role { font-size: 12px; padding: 1px 6px; border-radius: 4px; border: 1px solid var(--line); white-space: nowrap; }
.role-user { color: var(--accent); } .role-assistant { color: var(--good); } .role-tool, .role-system { color: var(--warn); }
form.bar { display: flex; flex-wrap: wrap; gap: 8px 12px; align-items: flex-end; margin: 12px 0; }
label { display: flex; flex-direction: column; gap: 2px; font-size: 13px; color: var(--muted); }
input, select, button { font: inherit; color: var(--fg); background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 6px 8px; }
input[type="search"], input[type="text"] { min-width: 220px; }
button { cursor: pointer; background: var(--accent); border-color: var(--accent); color: #fff; }
button.quiet { background: transparent; color: var(--accent); }
button.small { font-size: 12px; padding: 2px 6px; margin: 2px 4px 2px 0; background: transparent; color: var(--accent); }
button.danger { background: transparent; color: var(--bad); border-color: var(--bad); }
.notice { padding: 8px; border: 1px solid var(--line); border-radius: 6px; }
details.summary { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; margin: 8px 0; }
details.summary > summary { cursor: pointer; padding: 8px 12px; }
details.summary > div { padding: 0 12px 12px; }
.summary-text { white-space: pre-wrap; word-break: break-word; background: var(--bg); border-radius: 6px; padding: 8px; }
.tag { display: inline-block; font-size: 12px; padding: 0 6px; border-radius: 4px; background: var(--accent-soft); margin-left: 4px; }
.tag.warn { background: transparent; color: var(--warn); border: 1px solid var(--warn); }
.tag.bad { background: transparent; color: var(--bad); border: 1px solid var(--bad); }
.state { padding: 16px; border-radius: 8px; background: var(--panel); border: 1px solid var(--line); }
.state-empty { color: var(--muted); }
.state-loading { color: var(--muted); }
.state-error { color: var(--bad); border-color: var(--bad); }
.state-warn { color: var(--warn); border-color: var(--warn); }
.pager { display: flex; gap: 16px; margin: 10px 0; flex-wrap: wrap; }
.plot { width: 100%; height: auto; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; }
.plot .axis { stroke: var(--line); }
.plot text { fill: var(--muted); font-size: 11px; }
/* The plot scales to its width: on a phone (390 px) 11 units are 5 px; 24 units stay readable (about 11 px). */
@media (max-width: 600px) { .plot text { font-size: 24px; } }
.plot .line-full { fill: none; stroke: var(--full); stroke-width: 2; stroke-dasharray: 5 4; }
.plot .line-sent { fill: none; stroke: var(--accent); stroke-width: 2; }
.plot .point-sent { fill: var(--accent); }
.plot .compaction { fill: var(--warn); }
.legend { display: flex; gap: 16px; flex-wrap: wrap; font-size: 13px; color: var(--muted); margin: 6px 0; }
.legend i { display: inline-block; width: 18px; height: 3px; vertical-align: middle; margin-right: 6px; background: var(--accent); }
.legend i.full { background: var(--full); } .legend i.compaction { background: var(--warn); height: 10px; width: 6px; }
@media (max-width: 640px) {
  body { font-size: 14px; }
  main, .panel { padding: 12px 10px 40px; }
  .top { padding: 8px 10px; }
  th, td { padding: 5px 6px; }
  input[type="search"], input[type="text"] { min-width: 0; width: 100%; }
  form.bar label { flex: 1 1 100%; }
  .hide-narrow { display: none; }
  .narrow-only { display: block; }
  td.when { white-space: normal; min-width: 80px; }
  td { overflow-wrap: anywhere; }
  th, th.num { white-space: normal; }
}
`;
