package apidocs

// styleSheet is the page's only style, inline (the Content-Security-Policy
// allows it by its hash). System fonts only: nothing is fetched.
const styleSheet = `
:root{--fg:#1d2330;--muted:#5b6475;--line:#dfe3ea;--bg:#fff;--side:#f6f7f9;--code:#f1f3f6;--accent:#1f5fbf}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
nav{position:fixed;top:0;bottom:0;left:0;width:290px;overflow-y:auto;background:var(--side);border-right:1px solid var(--line);padding:12px 14px;font-size:13px}
nav .brand{font-weight:600;font-size:15px;margin:0 0 8px}
nav .brand span{color:var(--muted);font-weight:400}
nav h2{font-size:12px;text-transform:uppercase;letter-spacing:.05em;margin:14px 0 4px;color:var(--muted)}
nav ul{list-style:none;margin:0;padding:0}
nav li a{display:block;padding:2px 0;color:var(--fg);text-decoration:none;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
nav a:hover{color:var(--accent)}
main{margin-left:290px;padding:20px 36px 80px;max-width:1180px}
h1{margin:0 0 6px}
.lead{font-size:17px;color:var(--muted)}
section.tag>h2,#schemas>h2{border-bottom:2px solid var(--line);padding-bottom:4px;margin-top:48px;text-transform:capitalize}
article.op{border:1px solid var(--line);border-radius:6px;padding:4px 18px 12px;margin:18px 0}
article.op h3{font-size:16px;margin:12px 0 4px;word-break:break-all}
.summary{font-size:15px;margin:2px 0}
.opid,.headers,.note,.facts{color:var(--muted);font-size:13px}
h4{margin:14px 0 6px;font-size:14px}
code{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--code);padding:1px 4px;border-radius:3px}
pre{font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--code);padding:10px 12px;border-radius:4px;overflow-x:auto;margin:4px 0}
table{border-collapse:collapse;width:100%;margin:4px 0 8px;font-size:13.5px}
th,td{text-align:left;vertical-align:top;border-bottom:1px solid var(--line);padding:5px 8px}
th{color:var(--muted);font-weight:600;font-size:12px}
td table{margin-top:6px}
.req{color:#a3361b;font-size:11px;text-transform:uppercase;letter-spacing:.03em}
.m{display:inline-block;min-width:58px;text-align:center;font:600 11px/1.8 ui-monospace,Menlo,monospace;border-radius:3px;color:#fff;background:#5b6475}
.m-get{background:#2f7d4f}.m-post{background:#1f5fbf}.m-delete{background:#b23a2b}.m-options{background:#7a5aa6}
.status{display:inline-block;min-width:40px;font:600 12px ui-monospace,Menlo,monospace;padding:1px 6px;border-radius:3px;background:var(--code)}
.s2{color:#2f7d4f}.s4{color:#a3361b}.sd{color:var(--muted)}
.resp{margin:6px 0 10px}
.media{margin-left:12px}
.ctype{margin:4px 0}
details.example summary{cursor:pointer;color:var(--muted);font-size:13px}
a{color:var(--accent)}
.samples details.sample{display:inline-block;vertical-align:top;margin:0 6px 4px 0}
.samples details.sample[open]{display:block}
.samples details.sample summary{cursor:pointer;font-size:13px;padding:1px 8px;border:1px solid var(--line);border-radius:3px;display:inline-block}
.samples pre code{background:none;padding:0}
form.search{margin:4px 0 8px;display:flex;gap:4px}
form.search input{flex:1;min-width:0;font:inherit;padding:3px 6px;border:1px solid var(--line);border-radius:3px}
form.search button{font:inherit;padding:3px 8px}
ol.results li{margin:6px 0}
section.schema{border-top:1px solid var(--line);padding-top:4px}
@media (max-width:900px){nav{position:static;width:auto;border-right:0;border-bottom:1px solid var(--line)}main{margin-left:0;padding:16px}}
`
