import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  NotFoundException,
  Param,
  Patch,
  Post as HttpPost,
} from '@nestjs/common';
import { ParseIdPipe } from '@app/service-kit';
import { CreatePostDto } from './dto/create-post.dto';
import { UpdatePostDto } from './dto/update-post.dto';
import { Post } from './post.entity';
import { PostsService } from './posts.service';

@Controller('posts')
export class PostsController {
  constructor(private readonly posts: PostsService) {}

  /**
   * 201 with the post; 400 naming each bad field; 413 for a body over the limit. With `publishAt` ahead, the
   * author's followers are told at that time.
   */
  @HttpPost()
  create(@Body() body: CreatePostDto): Promise<Post> {
    return this.posts.create(body);
  }

  @Get(':id')
  async findOne(@Param('id', ParseIdPipe) id: number): Promise<Post> {
    const post = await this.posts.findOne(id);
    if (!post) throw new NotFoundException(`Post ${id} does not exist.`);
    return post;
  }

  /**
   * 200 with the post; 404 when there is none; 409 for a new `publishAt` once it was announced. Edited before
   * its `publishAt`, the post is announced once, as edited.
   */
  @Patch(':id')
  async update(@Param('id', ParseIdPipe) id: number, @Body() body: UpdatePostDto): Promise<Post> {
    const post = await this.posts.update(id, body);
    if (!post) throw new NotFoundException(`Post ${id} does not exist.`);
    return post;
  }

  /** 204; 404 when there is no such post. Deleted before its `publishAt`, the post is never announced. */
  @Delete(':id')
  @HttpCode(204)
  async remove(@Param('id', ParseIdPipe) id: number): Promise<void> {
    if (!(await this.posts.remove(id))) throw new NotFoundException(`Post ${id} does not exist.`);
  }
}
