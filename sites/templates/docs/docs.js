// Minimal Markdown viewer: headings, lists, links, bold and code. Pages are the .md files.
function render(md) {
  const esc = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const inline = (s) => esc(s)
    .replace(/`([^`]+)`/g, "<code>$1</code>")
    .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
    .replace(/\[([^\]]+)\]\(([^)]+\.md)\)/g, (_, t, href) => `<a href="#${href.startsWith("guide/") || !location.hash.includes("/") ? href : "guide/" + href}">${t}</a>`);
  return md.split(/\n{2,}/).map((block) => {
    const h = /^(#{1,3}) (.*)$/.exec(block);
    if (h) return `<h${h[1].length}>${inline(h[2])}</h${h[1].length}>`;
    if (/^(\d+\.|-) /.test(block)) {
      const tag = /^\d/.test(block) ? "ol" : "ul";
      return `<${tag}>${block.split("\n").map((l) => `<li>${inline(l.replace(/^(\d+\.|-) /, ""))}</li>`).join("")}</${tag}>`;
    }
    return `<p>${inline(block)}</p>`;
  }).join("\n");
}
async function show() {
  const page = location.hash.slice(1) || "README.md";
  const res = await fetch(page);
  document.getElementById("page").innerHTML = res.ok ? render(await res.text()) : "<p>Page not found.</p>";
}
window.addEventListener("hashchange", show);
show();
