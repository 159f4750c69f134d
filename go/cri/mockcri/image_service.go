package mockcri

import (
	"context"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// imageService is the CRI ImageService, reduced to what crictl asks before
// and while listing: ImageFsInfo (its check that the image API answers),
// ImageStatus and ListImages for the containers' images. Images are never
// pulled or removed (Unimplemented).
type imageService struct {
	runtimeapi.UnimplementedImageServiceServer
	inv *Inventory
}

// imageFsMountpoint is containerd's default image filesystem.
const imageFsMountpoint = "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs"

func (s *imageService) ImageFsInfo(context.Context, *runtimeapi.ImageFsInfoRequest) (*runtimeapi.ImageFsInfoResponse, error) {
	var used uint64
	for _, img := range s.inv.images() {
		used += img.Size
	}
	return &runtimeapi.ImageFsInfoResponse{ImageFilesystems: []*runtimeapi.FilesystemUsage{{
		Timestamp:  epoch.UnixNano(),
		FsId:       &runtimeapi.FilesystemIdentifier{Mountpoint: imageFsMountpoint},
		UsedBytes:  &runtimeapi.UInt64Value{Value: used},
		InodesUsed: &runtimeapi.UInt64Value{Value: uint64(len(s.inv.images())) * 1000},
	}}}, nil
}

func (s *imageService) ListImages(context.Context, *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	return &runtimeapi.ListImagesResponse{Images: s.inv.images()}, nil
}

// ImageStatus finds an image by id, digested reference or name. An unknown
// image is not an error: CRI answers an empty status.
func (s *imageService) ImageStatus(_ context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	want := req.GetImage().GetImage()
	for _, img := range s.inv.images() {
		if want == img.Id || want == img.RepoDigests[0] || want == img.RepoTags[0] {
			return &runtimeapi.ImageStatusResponse{Image: img}, nil
		}
	}
	return &runtimeapi.ImageStatusResponse{}, nil
}

// images returns one Image per distinct image id among the containers, in
// order of first use.
func (inv *Inventory) images() []*runtimeapi.Image {
	inv.imagesOnce.Do(func() {
		seen := map[string]bool{}
		for _, c := range inv.Containers {
			if seen[c.ImageId] {
				continue
			}
			seen[c.ImageId] = true
			inv.imageList = append(inv.imageList, &runtimeapi.Image{
				Id:          c.ImageId,
				RepoTags:    []string{c.Image.GetImage()},
				RepoDigests: []string{c.ImageRef},
				Size:        imageSize(c.ImageId),
				Spec:        &runtimeapi.ImageSpec{Image: c.ImageId},
			})
		}
	})
	return inv.imageList
}

// imageSize is a plausible, stable size for an image: 20 to 276 MB.
func imageSize(id string) uint64 {
	var h uint64
	for i := range len(id) {
		h = h*31 + uint64(id[i])
	}
	return 20e6 + h%256e6
}
