# collect/run.mk: kbv-collect and kbv-worker (the verification protocol).
