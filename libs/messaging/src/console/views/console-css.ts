/** The console's only stylesheet, served by the console itself (no CDN, no build step). */
export const CONSOLE_CSS = `
:root { color-scheme: light; --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --accent: #0b5cad; --bad: #a40e26; --ok: #116329; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: #fff; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 8px; top: 8px; background: #fff; padding: 4px 8px; z-index: 1; }
header { display: flex; flex-wrap: wrap; align-items: center; gap: 16px; padding: 8px 24px; background: #f6f8fa; border-bottom: 1px solid var(--line); }
.brand { font-weight: 600; }
nav ul { display: flex; gap: 12px; list-style: none; margin: 0; padding: 0; }
nav a { color: var(--accent); text-decoration: none; padding: 4px 6px; border-radius: 4px; }
nav a[aria-current="page"] { background: #ddf4ff; font-weight: 600; }
.signout { margin-left: auto; display: flex; gap: 8px; align-items: center; }
.who small { color: var(--muted); }
main { padding: 8px 24px 32px; max-width: 1280px; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 1.6em; }
table { border-collapse: collapse; width: 100%; margin: 8px 0 16px; font-size: 14px; }
th, td { border-bottom: 1px solid var(--line); padding: 5px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 13px; word-break: break-all; }
pre { background: #f6f8fa; border: 1px solid var(--line); padding: 8px; overflow: auto; max-height: 24em; white-space: pre-wrap; word-break: break-all; }
form.inline { display: flex; flex-wrap: wrap; gap: 12px; align-items: end; margin: 8px 0 16px; }
label { display: flex; flex-direction: column; gap: 2px; font-size: 13px; color: var(--muted); }
input, select, button { font: inherit; padding: 4px 8px; border: 1px solid var(--line); border-radius: 4px; }
button { background: var(--accent); color: #fff; border-color: var(--accent); cursor: pointer; }
button.secondary { background: #fff; color: var(--accent); }
:focus-visible { outline: 3px solid #f0a500; outline-offset: 2px; }
.notice { padding: 8px 12px; border-radius: 4px; border: 1px solid; }
.notice.error { color: var(--bad); background: #ffebe9; border-color: #ff8182; }
.notice.ok { color: var(--ok); background: #dafbe1; border-color: #4ac26b; }
.muted { color: var(--muted); }
.trend { display: flex; flex-wrap: wrap; align-items: center; gap: 0 6px; font-size: 12px; color: var(--muted); }
.trend small { min-width: 9em; } .spark { color: var(--accent); } .spark .axis { stroke: var(--line); } .growing { flex-basis: 100%; white-space: nowrap; }
.bad { color: var(--bad); } .good { color: var(--ok); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
.login { max-width: 360px; }
p.actions { display: flex; gap: 16px; align-items: center; }
nav.pager { display: flex; gap: 16px; margin: 8px 0 16px; }
nav.pager a { color: var(--accent); }
.login form { display: flex; flex-direction: column; gap: 12px; }
`;
