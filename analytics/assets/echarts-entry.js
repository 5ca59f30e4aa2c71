// The part of Apache ECharts that analytics.html uses, and nothing else: the
// charts and components its options name (bar, line, scatter and pie
// series; the grid with its axes, the legend, the title and the tooltip),
// drawn on canvas. build-echarts.sh bundles it into echarts.min.js. A chart
// that needs another part must add it here and rebuild; the page test in
// Chromium fails on an option whose part is missing.
import * as echarts from 'echarts/core';
import { BarChart, LineChart, PieChart, ScatterChart } from 'echarts/charts';
import { GridComponent, LegendComponent, TitleComponent, TooltipComponent } from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';

echarts.use([
  BarChart, LineChart, PieChart, ScatterChart,
  GridComponent, LegendComponent, TitleComponent, TooltipComponent,
  CanvasRenderer,
]);
window.echarts = echarts;
