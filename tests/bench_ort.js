// tests/bench_ort.js — ONNX Runtime (npm onnxruntime-node, CPU) on the forward exported by
// tests/ref/vit_ref.py onnx: ms per image, and the output checked against torch's.
//
//     node tests/bench_ort.js DIR [IMAGES] [THREADS]
// DIR holds vit.onnx, input.f32 (1x3xHxW) and output.f32 (torch's).  onnxruntime-node is looked up
// in build/bench-node (make deps-bench) unless ORT_NODE_MODULES says otherwise.  Figures only.
"use strict";
const fs = require("fs");
const path = require("path");

const dir = process.argv[2];
const images = parseInt(process.argv[3] || "5", 10);
const threads = parseInt(process.argv[4] || "2", 10);
if (!dir) {
  console.error("usage: node tests/bench_ort.js DIR [IMAGES] [THREADS]");
  process.exit(2);
}
const modules = process.env.ORT_NODE_MODULES ||
  path.join(__dirname, "..", process.env.BUILD || "build", "bench-node", "node_modules");
const ort = require(path.join(modules, "onnxruntime-node"));

function readF32(file) {
  const b = fs.readFileSync(file);
  return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
}

(async () => {
  const session = await ort.InferenceSession.create(path.join(dir, "vit.onnx"), {
    executionProviders: ["cpu"],
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: "sequential",
    graphOptimizationLevel: "all",
  });
  const input = readF32(path.join(dir, "input.f32"));
  const ref = readF32(path.join(dir, "output.f32"));
  const side = Math.round(Math.sqrt(input.length / 3));
  const meta = fs.readFileSync(path.join(dir, "shape.txt"), "utf8").trim().split(/\s+/).map(Number);
  const [h, w] = meta.length === 2 ? meta : [side, side];
  const feeds = { [session.inputNames[0]]: new ort.Tensor("float32", input, [1, 3, h, w]) };
  let out = await session.run(feeds); // warm-up
  const got = out[session.outputNames[0]].data;
  let worst = 0, mx = 0;
  for (let i = 0; i < ref.length; i++) {
    worst = Math.max(worst, Math.abs(got[i] - ref[i]));
    mx = Math.max(mx, Math.abs(ref[i]));
  }
  const times = [];
  for (let i = 0; i < images; i++) {
    const t0 = process.hrtime.bigint();
    out = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  console.log(`onnxruntime ${ort.env.versions ? ort.env.versions.common : ""} (onnxruntime-node, CPU, ` +
    `${threads} threads) ${h}x${w}: ${mean.toFixed(1)} ms/image mean, ${Math.min(...times).toFixed(1)} ms best; ` +
    `output vs torch max|diff|/max|ref| = ${(worst / mx).toExponential(2)}`);
})().catch((e) => {
  console.error("bench_ort: " + e.message);
  process.exit(1);
});
