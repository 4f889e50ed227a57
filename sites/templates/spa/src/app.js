// A tiny single-page app: a task list kept in localStorage, with hash routes
// (#/ all, #/open, #/done). No build step: edit and publish.
const key = "tasks";
const load = () => JSON.parse(localStorage.getItem(key) ?? "[]");
const save = (tasks) => localStorage.setItem(key, JSON.stringify(tasks));

function view() {
  const filter = location.hash.replace("#/", "") || "all";
  const tasks = load();
  const shown = tasks.filter((t) => filter === "all" || (filter === "done") === t.done);
  const app = document.getElementById("app");
  app.innerHTML = `
    <h1>Tasks</h1>
    <form id="add"><input name="title" placeholder="What needs doing?" required><button>Add</button></form>
    <nav>${["all", "open", "done"].map((f) => `<a href="#/${f}" class="${f === filter ? "on" : ""}">${f}</a>`).join(" ")}</nav>
    <ul>${shown.map((t) => `<li><label><input type="checkbox" data-id="${t.id}" ${t.done ? "checked" : ""}> ${t.title.replace(/</g, "&lt;")}</label></li>`).join("")}</ul>`;
  app.querySelector("#add").addEventListener("submit", (e) => {
    e.preventDefault();
    const title = new FormData(e.target).get("title").trim();
    if (title) save([...load(), { id: crypto.randomUUID(), title, done: false }]);
    view();
  });
  app.querySelectorAll("input[type=checkbox]").forEach((box) => box.addEventListener("change", () => {
    save(load().map((t) => (t.id === box.dataset.id ? { ...t, done: box.checked } : t)));
    view();
  }));
}
window.addEventListener("hashchange", view);
view();
