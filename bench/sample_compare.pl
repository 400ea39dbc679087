#!/usr/bin/perl
# sample_compare.pl — sampled shares against a reference, for bench_sampling.
#
#   sample_compare.pl shares MEASURED SAMPLED.json
#   sample_compare.pl subs N ROOT TRACED.json[,...] SAMPLED.json[,...]
#
# The JSON files are 'nytp top --json -n 0' of a profile.  Shares are of
# all statement time ('shares'), or of the inclusive time of the sub ROOT
# ('subs': Perl::Tidy::perltidy leaves out compiling the modules, a fixed
# cost that a traced profile's slower run makes a smaller share); with
# several profiles a side, each sub's share is the median of its shares
# in them (the load of a shared machine changes while a program runs and
# moves wall-time shares between its phases).  Beside each difference is the
# binomial standard error of a share p estimated from N samples,
# sqrt(p (1 - p) / N), N the sampled profile's sample count: what the
# sample count allows if the samples were independent draws (they are
# periodic, which usually does better; a weighted sample of a long op
# counts once, which does worse).  'shares' compares the inclusive shares
# of main::fifty, thirty and twenty with the shares the program measured
# (MEASURED: its "NAME PERCENT" lines) and says whether each is within 5
# points (the target); 'subs' lists the top N subs of the traced profile
# by exclusive share, and by inclusive share, with the sampled profile's.
use strict;
use warnings;
use JSON::PP;

sub slurp {
    my $f = shift;
    open my $fh, '<', $f or die "$f: $!\n";
    local $/;
    return scalar <$fh>;
}

sub shares_of {
    my ($json, $key) = @_;
    my $d = $json->{totals}{statements} || 1;
    return { map { $_->{name} => 100 * $_->{$key} / $d } @{$json->{subs}} };
}

# Each sub's median share (of ROOT's inclusive time) over the profiles.
sub median_shares {
    my ($key, $root, @profiles) = @_;
    my %all;
    for my $j (@profiles) {
        my ($r) = grep { $_->{name} eq $root } @{$j->{subs}};
        my $d = $r && $r->{incl} ? $r->{incl} : 1;
        push @{$all{$_->{name}}}, 100 * $_->{$key} / $d for @{$j->{subs}};
    }
    my %m;
    for my $name (keys %all) {
        my @v = sort { $a <=> $b } @{$all{$name}};
        push @v, (0) x (@profiles - @v); # absent from a profile: 0 there
        @v = sort { $a <=> $b } @v;
        $m{$name} = @v % 2 ? $v[$#v / 2] : ($v[@v / 2 - 1] + $v[@v / 2]) / 2;
    }
    return \%m;
}

sub se { my ($p, $n) = @_; $p /= 100; return $n ? 100 * sqrt($p * (1 - $p) / $n) : 0 }

my $mode = shift // '';
if ($mode eq 'shares') {
    my ($measured, $sampled) = @ARGV;
    my %truth = slurp($measured) =~ /^(\w+) ([\d.]+)$/mg;
    my $j = decode_json(slurp($sampled));
    my $n = $j->{sampled}{samples} // 0;
    my $in = shares_of($j, 'incl');
    my $sum = 0;
    $sum += $in->{"main::$_"} // 0 for keys %truth;
    printf "   %-8s %9s %9s %7s %8s\n", 'sub', 'measured', 'sampled', 'diff', 'SE';
    my $worst = 0;
    for my $s (sort { $truth{$b} <=> $truth{$a} } keys %truth) {
        my $got = $sum ? 100 * ($in->{"main::$s"} // 0) / $sum : 0;
        my $d = $got - $truth{$s};
        $worst = abs $d if abs $d > $worst;
        printf "   %-8s %8.2f%% %8.2f%% %+7.2f %7.2f\n", $s, $truth{$s}, $got, $d, se($truth{$s}, $n);
    }
    printf "   %d samples; largest difference %.2f points (target: within 5)%s\n", $n, $worst,
        $worst > 5 ? ': ABOVE TARGET' : '';
} elsif ($mode eq 'subs') {
    my ($top, $root, $traced, $sampled) = @ARGV;
    my @t = map { decode_json(slurp($_)) } split /,/, $traced;
    my @s = map { decode_json(slurp($_)) } split /,/, $sampled;
    my @n = sort { $a <=> $b } map { $_->{sampled}{samples} // 0 } @s;
    my $n = $n[0]; # the smallest: the error of one run
    for my $key (qw(excl incl)) {
        my ($ts, $ss) = (median_shares($key, $root, @t), median_shares($key, $root, @s));
        my @names = grep { $_ ne $root } sort { $ts->{$b} <=> $ts->{$a} || $a cmp $b } keys %$ts;
        @names = grep { defined } @names[0 .. $top - 1];
        printf "   top %d subs by %s share of %s: traced, sampled, difference, binomial SE (N = %d)\n",
            $top, $key eq 'excl' ? 'exclusive' : 'inclusive', $root, $n;
        my ($out, $big) = (0, 0);
        for my $name (@names) {
            my $d = ($ss->{$name} // 0) - $ts->{$name};
            my $e = se($ts->{$name}, $n);
            $out++ if abs $d > 2 * $e;
            $big = abs $d if abs $d > $big;
            (my $short = $name) =~ s/^Perl::Tidy:://;
            printf "   %7.2f%% %7.2f%% %+6.2f %5.2f  %s\n", $ts->{$name}, $ss->{$name} // 0, $d, $e,
                substr($short, 0, 56);
        }
        printf "   %d of %d differ by more than 2 SE; largest difference %.2f points\n", $out,
            scalar @names, $big;
    }
} else {
    die "usage: sample_compare.pl shares MEASURED SAMPLED.json | subs N ROOT TRACED.json[,...] SAMPLED.json[,...]\n";
}
