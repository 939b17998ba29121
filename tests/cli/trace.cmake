# trace.cmake - trace/ is a library without a command of its own: its tests are
# unit tests (tests/unit/test_trace.c); each command tests its own trace I/O.
