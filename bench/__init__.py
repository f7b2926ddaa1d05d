"""The benchmark harness behind `make bench`: loads 100,000 posts, measures the core loop
against raw floors, and writes bench/REPORT.md. Not a test suite: nothing here is timed in CI."""
