# SPDX-License-Identifier: MIT
# Convenience targets; the scripts are the source of truth.
.PHONY: all run test test-fast format bench clean
all:
	./build.sh --version
run:
	./build.sh
test:
	./test.sh
test-fast:
	./test.sh --fast
bench:
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DPARPLAN_TESTS=OFF >/dev/null
	cmake --build build -j >/dev/null
	./build/bench/bench_load
	./build/bench/bench_sim
	./build/bench/bench_part
	./build/bench/bench_dag
	./build/bench/bench_map
	./build/bench/bench_plan
	./build/bench/bench_fidelity
	./build/bench/bench_throughput
format:
	clang-format -i src/*/*.c src/*/*.h include/*.h tools/*.c tools/*.h tests/*.c tests/*.h bench/*.c
clean:
	rm -rf build build-release build-test build-asan
