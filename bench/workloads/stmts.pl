# Statement-heavy CPU workload for bench_profiler: loops over strings,
# hashes and regexes with few sub calls (most time goes to the statement
# profiler and to slow ops).
# NYTP_BENCH_SCALE=N (bench/run instructions) does about 1/N of the work
my $scale = $ENV{NYTP_BENCH_SCALE} || 1;
my %count;
my $text = join ' ', map { ('alpha', 'beta', 'gamma', 'delta')[$_ % 4] . ($_ % 97) } 1 .. 20_000;
for my $round (1 .. int(80 / $scale)) {
    for my $w (split / /, $text) {
        next unless $w =~ /^([a-z]+)(\d+)$/;
        $count{$1} += $2;
        $count{len} += length $w;
    }
    (my $t = $text) =~ s/a/A/g;
    $count{A} += ($t =~ tr/A//);
}
my $s = 0;
for (my $i = 0; $i < int(5_000_000 / $scale); $i++) {
    $s += $i % 7;
    $s ^= $i if $i & 1;
}
my @sorted = sort { $count{$a} <=> $count{$b} } keys %count;
print "$s @sorted\n";
