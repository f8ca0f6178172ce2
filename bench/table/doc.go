// Command table joins the outputs of benchmark runs ("metric value unit"
// lines) into a Markdown table: one column per side (the median over its
// runs) and one column per ratio between two sides. bench/compare.sh runs
// the benchmarks and calls it; the layouts it knows are
//
//	krt: meshd's krt (bench/krt), Istio's krt (bench/istio-krt) and the
//	     from-scratch floor (bench/limit);
//	xds: meshd's ADS server over SotW and Delta (xds/internal/bench) and
//	     go-control-plane's SnapshotCache (bench/gcp-snapshot);
//	krt-ab, xds-ab: the same benchmarks of meshd built from a base
//	     revision and from this tree (compare.sh with BASE).
//
// Each side is given as -run name=file,file,...; a side with no run is
// shown blank. For example:
//
//	go run ./bench/table -layout krt -run meshd=ours-1.txt,ours-2.txt -run istio=istio-1.txt -run floor=limit-1.txt
package main
