/*
 * ernic-tsc-khz: prints the host's TSC frequency in kHz, measured against CLOCK_MONOTONIC_RAW over
 * 100 ms. Under TCG the guest's TSC is the host's, so ernic-vm derives the guest's lpj= from it
 * (see ernic-vm: the secondary vCPUs' own delay calibration is unreliable under TCG).
 */
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

static long long ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC_RAW, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(void)
{
	long long t0 = ns(), t1;
	unsigned long long c0 = __rdtsc(), c1;

	do
		t1 = ns();
	while (t1 - t0 < 100000000LL);
	c1 = __rdtsc();
	printf("%llu\n", (c1 - c0) * 1000000ULL / (unsigned long long)(t1 - t0));
	return 0;
}
