#!/usr/bin/perl
# Writes the tiny MaxMind databases the geoip stage tests read (committed beside this script;
# run it again after changing it):
#   apt-get install libmaxmind-db-writer-perl
#   tests/pipeline_stages/geoip/make-test-databases.pl tests/pipeline_stages/geoip
# Addresses are from the documentation ranges (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24,
# 2001:db8::/32); the records are made up in the shape of GeoLite2's.
use strict;
use utf8;
use warnings;
use MaxMind::DB::Writer::Tree;

my $dir = shift // '.';

my %types = (
  autonomous_system_number       => 'uint32',
  autonomous_system_organization => 'utf8_string',
  city                           => 'map',
  code                           => 'utf8_string',
  continent                      => 'map',
  country                        => 'map',
  de                             => 'utf8_string',
  en                             => 'utf8_string',
  geoname_id                     => 'uint32',
  iso_code                       => 'utf8_string',
  latitude                       => 'double',
  location                       => 'map',
  longitude                      => 'double',
  names                          => 'map',
  postal                         => 'map',
  subdivisions                   => [ 'array', 'map' ],
  time_zone                      => 'utf8_string',
);

sub write_db {
  my ($file, $type, $ip_version, %networks) = @_;
  my $tree = MaxMind::DB::Writer::Tree->new(
    ip_version               => $ip_version,
    record_size              => 24,
    database_type            => $type,
    languages                => ['en'],
    description              => { en => "skald test database ($type)" },
    map_key_type_callback    => sub { $types{ $_[0] } },
    remove_reserved_networks => 0,
    alias_ipv6_to_ipv4       => 1,
  );
  for my $network (sort keys %networks) {
    $tree->insert_network($network, $networks{$network});
  }
  open my $fh, '>:raw', "$dir/$file" or die "$dir/$file: $!";
  $tree->write_tree($fh);
  close $fh or die "$dir/$file: $!";
}

my $europe = { code => 'EU', names => { en => 'Europe' } };
my $london = {
  city      => { geoname_id => 2643743, names => { en => 'London' } },
  continent => $europe,
  country   => { iso_code => 'GB', names => { en => 'United Kingdom' } },
  location  => { latitude => 51.5142, longitude => -0.0931, time_zone => 'Europe/London' },
  postal    => { code => 'EC2V' },
  subdivisions => [
    { iso_code => 'ENG', names => { en => 'England' } },
    { iso_code => 'WSM', names => { en => 'Westminster' } },
  ],
};
my $sweden = {    # country only: no city, location, postal or subdivision
  continent => $europe,
  country   => { iso_code => 'SE', names => { en => 'Sweden' } },
};
my $munich = {    # no English city name; a latitude Go prints in e-notation
  city      => { names => { de => 'München' } },
  continent => $europe,
  country   => { iso_code => 'DE', names => { en => 'Germany' } },
  location  => { latitude => 0.00005, longitude => 11.5755 },
};
my $tokyo = {
  city      => { names => { en => 'Tokyo' } },
  continent => { code => 'AS', names => { en => 'Asia' } },
  country   => { iso_code => 'JP', names => { en => 'Japan' } },
  location  => { latitude => 35.6893, longitude => 139.6899, time_zone => 'Asia/Tokyo' },
};

write_db('city.mmdb', 'GeoLite2-City', 6,
  '192.0.2.0/24'    => $london,
  '198.51.100.0/24' => $sweden,
  '203.0.113.0/24'  => $munich,
  '2001:db8::/32'   => $tokyo);
write_db('city-ipv4.mmdb', 'GeoLite2-City', 4, '192.0.2.0/24' => $london);
write_db('country.mmdb', 'GeoLite2-Country', 6,
  '192.0.2.0/24'  => { continent => $europe, country => $london->{country} },
  '2001:db8::/32' => { continent => $tokyo->{continent}, country => $tokyo->{country} });
write_db('asn.mmdb', 'GeoLite2-ASN', 6,
  '192.0.2.0/24' =>
    { autonomous_system_number => 64496, autonomous_system_organization => 'Example Networks' },
  '2001:db8::/32' =>
    { autonomous_system_number => 64497, autonomous_system_organization => 'Example IPv6 Networks' });
