package NytpMask;
# The timing-free view of 'nytp dump --data' output, used to compare a
# profile written by Devel::NYTP with one written by Devel::NYTProf of the
# same program: times (and attributes that are times, dates, names of the
# writer) are masked; files, line counts, subs, line ranges, call counts,
# call sites, recursion depths and options are kept.
use strict;
use warnings;
use Exporter 'import';
our @EXPORT = qw(mask_profile_dump);

# Attributes that must agree (the others are times, dates or versions).
my %keep_attr = map { $_ => 1 } qw(PL_perldb nv_size perl_version ticks_per_sec
    clock_id complete total_stmts_measured total_stmts_discounted total_sub_calls);

sub mask_profile_dump {
    my ($text) = @_;
    my @out;
    for my $line (split /\n/, $text) {
        my @f = split /\t/, $line, -1;
        if ($f[0] eq 'attribute') {
            next unless $keep_attr{ $f[1] };
        } elsif ($f[0] eq 'option' && $f[1] eq 'inc') {
            next; # Devel::NYTP's @INC, which Devel::NYTProf does not write
        } elsif ($f[0] =~ /^fid_(?:line|block|sub)_time$/) {
            $f[-1] =~ s/^\[ \S+ (\d+) \]$/[ T $1 ]/;
        } elsif ($f[-1] =~ /^\[ (\d+) \S+ \S+ (\S+) (\S+) \S+ (\d+) (.*) \]$/) {
            # call arc: count incl excl ucpu scpu reci rec_depth caller
            $f[-1] = "[ $1 T T $2 $3 T $4 $5 ]";
        } elsif ($f[0] eq 'sub_subinfo' && $f[-1] =~ /^\[ (\S+) calls (\d+) times \S+ \S+ (\d+) \S+ \]$/) {
            $f[-1] = "[ $1 calls $2 times T T $3 T ]";
        }
        s/\bDevel::NYTProf::Core::BEGIN\b|\bDevel::NYTP::BEGIN\b/PROFILER::BEGIN/g for @f; # the profiler's own module
        push @out, join "\t", @f;
    }
    return join "\n", @out, '';
}

1;
