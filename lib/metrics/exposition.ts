/** Prometheus text exposition for Churnscope's own /metrics: families of labelled values. */
export class Exposition {
  private readonly lines: string[] = [];

  family(name: string, type: "counter" | "gauge", help: string, rows: [Record<string, string>, number][]): this {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, value] of rows) {
      const text = Object.entries(labels)
        .map(([k, v]) => `${k}="${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`)
        .join(",");
      this.lines.push(`${name}{${text}} ${value}`);
    }
    return this;
  }

  text(): string {
    return `${this.lines.join("\n")}\n`;
  }
}
