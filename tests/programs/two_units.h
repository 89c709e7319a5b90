/* prog_two_units: constructs in two compilation units. */
double two_units_work(int n);
double two_units_loop(int n);
