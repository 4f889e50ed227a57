// The analytics page's chart: hits and visitors per hour or day, drawn with uPlot from the
// table the page already shows (data-series on #chart). Without script the table is the chart.
(function () {
  "use strict";
  var box = document.getElementById("chart");
  if (!box || typeof uPlot === "undefined") return;
  var series;
  try {
    series = JSON.parse(box.getAttribute("data-series") || "[]");
  } catch (e) {
    return;
  }
  if (!series.length) return;
  var xs = series.map(function (d) {
    return Date.parse(d.date.length === 10 ? d.date + "T00:00:00Z" : d.date) / 1000;
  });
  box.hidden = false;
  var width = Math.max(200, box.clientWidth || 600);
  var chart = new uPlot(
    {
      width: width,
      height: 220,
      series: [{}, { label: "Hits", stroke: "#2563eb", width: 2 }, { label: "Visitors", stroke: "#16a34a", width: 2 }],
      axes: [{}, { size: 50 }],
    },
    [xs, series.map(function (d) { return d.hits; }), series.map(function (d) { return d.visitors; })],
    box,
  );
  // Follow the page's width (a phone turned, a window resized) instead of keeping the first one.
  window.addEventListener("resize", function () {
    chart.setSize({ width: Math.max(200, box.clientWidth), height: 220 });
  });
})();
